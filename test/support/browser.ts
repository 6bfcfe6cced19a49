/**
 * The portal in a real browser (issue 36): playwright-core drives the system's Chromium (it
 * downloads none), each person gets a context of their own (cookies apart), signs in through
 * Dex's real login form, and every page can be checked with axe and kept as a screenshot under
 * .local/screenshots/<test>/<page>.png (gitignored) for a person to look at after the run.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env["HCP_CHROMIUM"] ?? "/usr/bin/chromium";
const SCREENSHOTS = fileURLToPath(new URL("../../.local/screenshots/", import.meta.url));

/** Headless Chromium; as root in a container its sandbox cannot start, and /dev/shm is small. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

export interface Person {
  email: string;
  password: string;
}

export interface SignedIn {
  context: BrowserContext;
  page: Page;
}

/**
 * A context of its own for `who`, signed in to the portal at `portalUrl` through Dex's form.
 * The portal and Dex serve from test CAs the browser does not know, hence ignoreHTTPSErrors.
 */
export async function signIn(browser: Browser, portalUrl: string, who: Person): Promise<SignedIn> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  // The portal sends a person without a session to /login, which sends them on to Dex.
  await page.goto(`${portalUrl}/`);
  await page.locator('input[name="login"]').fill(who.email);
  await page.locator('input[name="password"]').fill(who.password);
  await Promise.all([
    page.waitForURL((url) => url.origin === new URL(portalUrl).origin && url.pathname === "/"),
    page.locator('button[type="submit"]').click(),
  ]).catch(async (err: unknown) => {
    throw new Error(`${who.email} not signed in (at ${page.url()}): ${String(err)}\n${await bodyText(page)}`);
  });
  return { context, page };
}

async function bodyText(page: Page): Promise<string> {
  return (
    await page
      .locator("body")
      .innerText()
      .catch(() => "")
  ).slice(0, 2000);
}

/** Fails on serious or critical accessibility violations of the page as it is, naming each. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length === 0) return;
  const lines = bad.map(
    (v) =>
      `  ${v.impact ?? "?"} ${v.id}: ${v.help} (${v.helpUrl})\n${v.nodes
        .slice(0, 5)
        .map((n) => `    ${n.target.join(" ")}: ${n.failureSummary ?? ""}`)
        .join("\n")}`,
  );
  throw new Error(
    `${what} (${page.url()}) has ${bad.length} serious accessibility violations:\n${lines.join("\n")}`,
  );
}

/** Keeps a full-page screenshot of `page` as .local/screenshots/<test>/<name>.png; returns its path. */
export async function screenshot(page: Page, test: string, name: string): Promise<string> {
  const dir = join(SCREENSHOTS, test.replace(/[^\w.-]+/g, "-"));
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** axe and a screenshot: what every page visited gets. */
export async function checkPage(page: Page, test: string, name: string): Promise<void> {
  await screenshot(page, test, name);
  await expectAccessible(page, name);
}
