/**
 * The portal in a real Chromium (issue 36): people sign in through Dex's login form, see the
 * region and its clusters, ask for sessions and decide them; a viewer is offered no control and
 * the server refuses what he forges from his own signed-in browser. Every page visited is checked
 * with axe and kept as a screenshot under .local/screenshots/portal-browser/.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { AccessSessionResource, type AccessSession } from "../../operators/api/v1alpha1/accesssession.ts";
import { HcpClusterResource, ManagementClusterResource } from "../../operators/api/v1alpha1/index.ts";
import type { ManagementCluster } from "../../operators/api/v1alpha1/index.ts";
import { startSreAccess, type SreAccess, type SrePerson } from "../../hack/harness/sre-access.ts";
import { checkPage, launchBrowser, signIn, type SignedIn } from "../support/browser.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { GateClient, readyAtOwnApi } from "../support/gate-client.ts";
import { clusterInfo, region } from "../support/region.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const SHOTS = "portal-browser";
const service = clientFor("service");
const customer = `pb-${process.pid}`;
/** Unique in the shared region, so a search finds this cluster alone. */
const CLUSTER = `pb${process.pid}`;
let running: TestStack | undefined;
let sre: SreAccess | undefined;
let browser: Browser | undefined;
let scratch: { path: string; remove(): Promise<void> } | undefined;
const contexts: SignedIn[] = [];
let gate: GateClient;

const person = (username: string): SrePerson => {
  const p = sre?.people.find((x) => x.username === username);
  if (!p) throw new Error(`no person ${username}`);
  return p;
};

async function as(username: string): Promise<Page> {
  const signedIn = await signIn(browser!, sre!.portal.url, person(username));
  contexts.push(signedIn);
  return signedIn.page;
}

/** Reloads `page` until `text` shows (the portal reads from informer caches, a moment behind). */
async function reloadUntil(page: Page, text: string | RegExp): Promise<void> {
  await eventually(`"${String(text)}" on ${page.url()}`, async () => {
    await page.reload();
    const body = await page.locator("main").innerText();
    return typeof text === "string" ? body.includes(text) : text.test(body);
  });
}

const sessionsOf = async (owner: string): Promise<AccessSession[]> =>
  (await service.list<AccessSession>(AccessSessionResource)).items.filter(
    (s) => s.spec.owner === owner && s.spec.clusterRef.name === CLUSTER,
  );

beforeAll(async () => {
  scratch = await scratchDir("portal-browser");
  running = await startTestStack("portalbrowser", {
    accessSessions: { policy: { maxTtlSeconds: { ReadOnly: 43_200, Admin: 7_200 } } },
    // The cluster's API is a real kube-apiserver, which kubectl reaches through the gate.
    hostedApis: {
      hostedClusters: [CLUSTER],
      assetsDir: region().assetsDir,
      etcdUrl: region().etcdUrl,
      workDir: scratch.path,
    },
  });
  sre = await startSreAccess({
    workDir: scratch.path,
    serviceApiServerDir: join(region().workDir, "service"),
    serviceServer: clusterInfo("service").url,
    admin: service,
    namespace: running.stack.namespace,
  });
  gate = new GateClient(sre, scratch.path);
  await service.create(namespaceType, { metadata: { name: customer } });
  const c = sampleCluster();
  c.metadata = { name: CLUSTER, namespace: customer };
  c.spec.dns.baseDomainPrefix = CLUSTER;
  delete c.spec.placement;
  await service.create(HcpClusterResource, c);
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  for (const c of contexts) await c.context.close().catch(() => undefined);
  await browser?.close();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
  await sre?.stop();
  await running?.stop();
  await scratch?.remove();
});

describe("the portal in Chromium", () => {
  let adminSession = "";

  it("signs alice (an SRE) in through Dex, shows the region, and takes her read-only and admin requests", async () => {
    const alice = person("alice");
    const page = await as("alice");
    expect(await page.locator("h1").innerText()).toBe("Region");
    expect(await page.locator("header").innerText()).toContain(`Signed in as ${alice.email}`);
    const mcs = (await service.list<ManagementCluster>(ManagementClusterResource)).items;
    expect(mcs.length).toBeGreaterThan(0);
    for (const mc of mcs) await reloadUntil(page, mc.metadata.name ?? "");
    // An SRE may cordon.
    expect(await page.getByRole("button", { name: /^Cordon$/ }).count()).toBeGreaterThan(0);
    await checkPage(page, SHOTS, "region-alice");

    await page.getByRole("link", { name: "Sessions" }).click();
    await page.waitForURL(/\/sessions$/);
    await checkPage(page, SHOTS, "sessions-empty-alice");
    for (const level of ["ReadOnly", "Admin"] as const) {
      const form = page.locator('form[action="/sessions"]');
      await form.getByLabel("Namespace").fill(customer);
      await form.getByLabel("Cluster").fill(CLUSTER);
      await form.getByLabel("Level").selectOption(level);
      await form.getByLabel("Reason").fill(`browser test ${level}`);
      await form.getByLabel("Seconds").fill("1800");
      const [posted] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/sessions")),
        form.getByRole("button", { name: "Request" }).click(),
      ]);
      await page.waitForLoadState();
      expect(posted.status(), await page.locator("body").innerText()).toBe(303);
      await eventually(`alice's ${level} session in the apiserver`, async () =>
        (await sessionsOf(alice.email)).some((s) => s.spec.level === level),
      );
    }
    const mine = await sessionsOf(alice.email);
    expect(mine.map((s) => s.spec.level).sort()).toEqual(["Admin", "ReadOnly"]);
    expect(mine.every((s) => s.spec.ttlSeconds === 1800)).toBe(true);
    adminSession = mine.find((s) => s.spec.level === "Admin")!.metadata.name!;
    for (const s of mine) await reloadUntil(page, s.metadata.name!);
    // Her own session offers her no approval.
    expect(await page.getByRole("button", { name: `Approve ${adminSession}` }).count()).toBe(0);
    await checkPage(page, SHOTS, "sessions-alice");
  });

  it("offers victor (a viewer) no approve or cordon, and refuses what he forges with his own CSRF token", async () => {
    expect(adminSession).not.toBe("");
    const page = await as("victor");
    const portal = sre!.portal.url;
    expect(await page.getByRole("button", { name: /Cordon/ }).count()).toBe(0);
    await checkPage(page, SHOTS, "region-victor");
    await page.goto(`${portal}/sessions`);
    await reloadUntil(page, adminSession);
    expect(await page.getByRole("button", { name: /^(Approve|Deny|Revoke) / }).count()).toBe(0);
    expect(await page.locator('form[action="/sessions"]').count()).toBe(0);
    await checkPage(page, SHOTS, "sessions-victor");

    // A valid token of his own, from the sign-out form of a page he can see, and the right Origin:
    // the server refuses by his role, not by a missing token.
    const csrf = await page.locator('form[action="/logout"] input[name="csrf"]').getAttribute("value");
    expect(csrf).toBeTruthy();
    const forge = (path: string) =>
      page.request.post(`${portal}${path}`, {
        form: { csrf: csrf! },
        headers: { origin: portal },
        maxRedirects: 0,
      });
    const approve = await forge(`/sessions/${adminSession}/approve`);
    expect(approve.status()).toBe(403);
    expect(await approve.text()).toMatch(/session\.decide: your roles \(viewer\) do not allow it/);
    const mc = (await service.list<ManagementCluster>(ManagementClusterResource)).items[0]!.metadata.name!;
    const cordon = await forge(`/managementclusters/${mc}/cordon`);
    expect(cordon.status()).toBe(403);
    expect(await cordon.text()).toMatch(/managementcluster\.cordon: your roles \(viewer\) do not allow it/);
    // And a form submitted from his page without the token is refused before any role is asked.
    const tokenless = await page.request.post(`${portal}/sessions/${adminSession}/approve`, {
      form: {},
      headers: { origin: portal },
      maxRedirects: 0,
    });
    expect(tokenless.status()).toBe(403);
    expect(await tokenless.text()).toContain("CSRF");
    const s = await service.find<AccessSession>(AccessSessionResource, adminSession);
    expect(s?.spec.approval).toBeUndefined();
    const mcNow = await service.find<ManagementCluster>(ManagementClusterResource, mc);
    expect(mcNow?.spec.schedulable).not.toBe(false);
  });

  it("lets carol (an approver) approve alice's admin session from the sessions page", async () => {
    expect(adminSession).not.toBe("");
    const carol = person("carol");
    const page = await as("carol");
    await checkPage(page, SHOTS, "region-carol");
    await page.goto(`${sre!.portal.url}/sessions`);
    await reloadUntil(page, adminSession);
    await checkPage(page, SHOTS, "sessions-carol");
    await Promise.all([
      page.waitForURL(/\/sessions$/),
      page.getByRole("button", { name: `Approve ${adminSession}` }).click(),
    ]);
    await eventually("the approval in the apiserver", async () => {
      const s = await service.find<AccessSession>(AccessSessionResource, adminSession);
      return s?.spec.approval?.decision === "Approved";
    });
    const s = await service.find<AccessSession>(AccessSessionResource, adminSession);
    expect(s?.spec.approval).toMatchObject({ decision: "Approved", by: carol.email });
    await eventually("the approval shown", async () => {
      await page.reload();
      return (await page.getByRole("button", { name: `Approve ${adminSession}` }).count()) === 0;
    });
    await checkPage(page, SHOTS, "sessions-approved-carol");
  });

  it("finds the cluster by search and opens its tree", async () => {
    const page = await as("alice");
    await page.getByRole("link", { name: "Clusters" }).click();
    await page.waitForURL(/\/clusters/);
    await checkPage(page, SHOTS, "clusters");
    await page.getByLabel("Search").fill(CLUSTER);
    await Promise.all([page.waitForURL(/[?&]q=/), page.getByLabel("Search").press("Enter")]);
    const link = page.getByRole("link", { name: `${customer}/${CLUSTER}` });
    await eventually("the cluster in the search result", async () => {
      if ((await link.count()) === 1) return true;
      await page.reload();
      return false;
    });
    await checkPage(page, SHOTS, "clusters-search");
    await Promise.all([page.waitForURL(new RegExp(`/clusters/${customer}/${CLUSTER}$`)), link.click()]);
    expect(await page.locator("h1").innerText()).toBe(`${customer}/${CLUSTER}`);
    expect(await page.locator("main").innerText()).toContain(CLUSTER);
    expect(await page.locator('section[aria-labelledby="tree"]').count()).toBe(1);
    await checkPage(page, SHOTS, "cluster");
  });

  it("opens the cluster's own API to alice through the gate once bob (another SRE) approves in the portal, never to bob, and closes it when she revokes", async () => {
    const alice = person("alice");
    const bob = person("bob");
    // The cluster Ready, its API served by the kube-apiserver the harness started for it.
    await eventually(
      "the cluster Ready at its own API server",
      () =>
        readyAtOwnApi(service, running?.stack, {
          namespace: customer,
          name: CLUSTER,
          hostedCluster: CLUSTER,
        }),
      120_000,
    );
    const before = new Set((await sessionsOf(alice.email)).map((s) => s.metadata.name));
    const page = await as("alice");
    await page.goto(`${sre!.portal.url}/clusters/${customer}/${CLUSTER}`);
    const form = page.locator('form[action="/sessions"]');
    expect(await form.getByLabel("Cluster").inputValue()).toBe(CLUSTER);
    await form.getByLabel("Level").selectOption("Admin");
    await form.getByLabel("Reason").fill("browser test: look at the API");
    await form.getByLabel("Seconds").fill("1800");
    await Promise.all([
      page.waitForURL(/\/sessions$/),
      form.getByRole("button", { name: "Request" }).click(),
    ]);
    let name = "";
    await eventually("alice's new admin session in the apiserver", async () => {
      const made = (await sessionsOf(alice.email)).find((s) => !before.has(s.metadata.name));
      name = made?.metadata.name ?? "";
      return made?.spec.level === "Admin";
    });
    const kubeconfig = await gate.kubeconfig(alice, name);
    const early = await gate.kubectl(alice, kubeconfig, "get", "--raw", "/api/v1/namespaces");
    expect(early.ok).toBe(false);
    expect(early.out).toMatch(/cannot be used: NotApproved/);

    const bobPage = await as("bob");
    await bobPage.goto(`${sre!.portal.url}/sessions`);
    await reloadUntil(bobPage, name);
    await checkPage(bobPage, SHOTS, "sessions-bob");
    await Promise.all([
      bobPage.waitForURL(/\/sessions$/),
      bobPage.getByRole("button", { name: `Approve ${name}` }).click(),
    ]);
    await eventually(
      "the session Active",
      async () => {
        const s = await service.find<AccessSession>(AccessSessionResource, name);
        return s?.status?.phase === "Active";
      },
      60_000,
    );
    expect((await service.find<AccessSession>(AccessSessionResource, name))?.spec.approval).toMatchObject({
      decision: "Approved",
      by: bob.email,
    });
    const ok = await gate.kubectl(alice, kubeconfig, "get", "namespaces", "-o", "name");
    expect(ok.ok, ok.out).toBe(true);
    expect(ok.out).toContain("namespace/kube-system");
    const audit = await readFile(running!.stack.hostedApi(CLUSTER)!.auditLogPath, "utf8");
    expect(audit).toContain(`system:sre-break-glass:${alice.email}:${name}`);
    const stranger = await gate.kubectl(bob, kubeconfig, "get", "--raw", "/api/v1/namespaces");
    expect(stranger.ok).toBe(false);
    expect(stranger.out).toContain(`belongs to another user, not ${bob.email}`);

    await page.goto(`${sre!.portal.url}/sessions`);
    await reloadUntil(page, /Active/);
    await checkPage(page, SHOTS, "sessions-active-alice");
    await Promise.all([
      page.waitForURL(/\/sessions$/),
      page.getByRole("button", { name: `Revoke ${name}` }).click(),
    ]);
    await eventually("the gate refusing the revoked session", async () =>
      (await gate.kubectl(alice, kubeconfig, "get", "--raw", "/api/v1/namespaces")).out.includes(
        "cannot be used: Revoked",
      ),
    );
  });
});
