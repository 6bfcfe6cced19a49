/**
 * The local region's OpenID Connect provider is a real Dex (hack/harness/dex.ts): its discovery
 * document over TLS from its own CA, ID tokens from the password grant that verify against its JWKS
 * with the person's email and groups, and refusals for a wrong password and an unknown client.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload } from "jose";
import { Agent, fetch as undiciFetch, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEX_GROUP_ROLES,
  dexUser,
  getJson,
  passwordGrant,
  startDex,
  type Dex,
  type TokenResponse,
} from "../../hack/harness/dex.ts";

const PORTAL_CALLBACK = "https://127.0.0.1:8443/callback";
let workDir: string;
let dex: Dex;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "dex-"));
  dex = await startDex({ workDir, portalRedirectURIs: [PORTAL_CALLBACK] });
});

afterAll(async () => {
  await dex?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface Discovery {
  issuer: string;
  jwks_uri: string;
  token_endpoint: string;
  grant_types_supported: string[];
  scopes_supported: string[];
}

async function discovery(): Promise<Discovery> {
  const { status, body } = await getJson(`${dex.issuer}/.well-known/openid-configuration`, dex.caPath);
  expect(status).toBe(200);
  return body as Discovery;
}

/** Verifies the ID token against Dex's published keys (fetched over TLS with the CA), as a relying party does. */
async function verifyIdToken(token: TokenResponse, audience: string | string[]): Promise<JWTPayload> {
  expect(token.status, JSON.stringify(token.body)).toBe(200);
  const idToken = token.body["id_token"];
  if (typeof idToken !== "string") throw new Error(`no id_token in ${JSON.stringify(token.body)}`);
  const { jwks_uri } = await discovery();
  // Dex's CA only, never the system's: as the portal and the session gate trust it (their CA flag).
  const dispatcher = new Agent({ connect: { ca: await readFile(dex.caPath) } });
  try {
    const keys = createRemoteJWKSet(new URL(jwks_uri), {
      [customFetch]: async (url, init) => {
        const headers = Object.fromEntries(init.headers);
        const res = await undiciFetch(url, { headers, signal: init.signal, dispatcher });
        const contentType = res.headers.get("content-type") ?? "application/json";
        return new Response(await res.text(), {
          status: res.status,
          headers: { "content-type": contentType },
        });
      },
    });
    const { payload } = await jwtVerify(idToken, keys, { issuer: dex.issuer, audience });
    return payload;
  } finally {
    await dispatcher.close();
  }
}

/**
 * The portal's authorisation code flow driven over HTTP as a browser would (no script runs on
 * Dex's pages): the authorisation request, Dex's login form, the redirect back with a code. Resolves
 * with the URL Dex sends the browser back to, or the page it stopped on.
 */
async function signInThroughLoginForm(
  dispatcher: Agent,
  email: string,
  password: string,
): Promise<{ callback?: URL; page: string }> {
  let url = `${dex.issuer}/auth?${new URLSearchParams({
    client_id: dex.portal.clientId,
    redirect_uri: PORTAL_CALLBACK,
    response_type: "code",
    scope: "openid email groups",
    state: "state-1",
  }).toString()}`;
  let form: Record<string, string> | undefined;
  for (let hop = 0; hop < 8; hop++) {
    const res = await request(url, {
      dispatcher,
      method: form ? "POST" : "GET",
      headers: form ? { "content-type": "application/x-www-form-urlencoded" } : {},
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const page = await res.body.text();
    form = undefined;
    const location = res.headers.location;
    if (typeof location === "string") {
      url = new URL(location, url).toString();
      if (url.startsWith(PORTAL_CALLBACK)) return { callback: new URL(url), page };
      continue;
    }
    const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
    if (res.statusCode !== 200 || !action || !page.includes('name="login"')) return { page };
    url = new URL(action.replaceAll("&amp;", "&"), url).toString();
    form = { login: email, password };
  }
  throw new Error(`no redirect to the portal after 8 hops (at ${url})`);
}

describe("Dex, the local OIDC provider", () => {
  it("publishes its discovery document over TLS with the password grant and the groups scope", async () => {
    const doc = await discovery();
    expect(doc.issuer).toBe(dex.issuer);
    expect(doc.issuer.startsWith("https://127.0.0.1:")).toBe(true);
    expect(doc.grant_types_supported).toEqual(
      expect.arrayContaining([
        "authorization_code",
        "password",
        "urn:ietf:params:oauth:grant-type:device_code",
      ]),
    );
    expect(doc.scopes_supported).toContain("groups");
  });

  it("has two SREs, an approver and a viewer, in the groups the portal's roles name", () => {
    const groupsOf = (name: string): string[] => dexUser(dex, name).groups;
    expect(groupsOf("alice")).toEqual(["sre"]);
    expect(groupsOf("bob")).toEqual(["sre"]);
    expect(groupsOf("carol")).toEqual(["approvers"]);
    expect(groupsOf("victor")).toEqual(["viewers"]);
    const mapped = new Set(DEX_GROUP_ROLES.map((pair) => pair.split("=")[0]));
    for (const user of dex.users) for (const g of user.groups) expect(mapped).toContain(g);
    expect(() => dexUser(dex, "mallory")).toThrow(/no user "mallory".*alice, bob, carol, victor/);
  });

  it("signs alice in and gives an ID token that verifies against its JWKS, with her email and groups", async () => {
    const alice = dexUser(dex, "alice");
    const claims = await verifyIdToken(
      await passwordGrant(dex, alice.email, alice.password),
      dex.hcpctl.clientId,
    );
    expect(claims["email"]).toBe("alice@example.com");
    expect(claims["email_verified"]).toBe(true);
    expect(claims["groups"]).toEqual(["sre"]);
    expect(claims["name"]).toBe("Alice");
  });

  it("gives hcpctl a token the portal accepts too, as the portal's trusted peer", async () => {
    const carol = dexUser(dex, "carol");
    const token = await passwordGrant(dex, carol.email, carol.password, { alsoFor: [dex.portal.clientId] });
    const claims = await verifyIdToken(token, dex.portal.clientId);
    expect(claims.aud).toEqual(expect.arrayContaining([dex.portal.clientId, dex.hcpctl.clientId]));
    expect(claims["groups"]).toEqual(["approvers"]);
  });

  it("signs carol in to the portal through its login form (authorisation code flow) and refuses a wrong password there", async () => {
    const carol = dexUser(dex, "carol");
    const dispatcher = new Agent({ connect: { ca: await readFile(dex.caPath) } });
    try {
      const { callback } = await signInThroughLoginForm(dispatcher, carol.email, carol.password);
      expect(callback?.searchParams.get("state")).toBe("state-1");
      const code = callback?.searchParams.get("code");
      expect(code).toBeTruthy();
      const basic = Buffer.from(`${dex.portal.clientId}:${dex.portal.clientSecret}`).toString("base64");
      const res = await request(`${dex.issuer}/token`, {
        dispatcher,
        method: "POST",
        headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: code!,
          redirect_uri: PORTAL_CALLBACK,
        }).toString(),
      });
      const body = (await res.body.json()) as Record<string, unknown>;
      const claims = await verifyIdToken({ status: res.statusCode, body }, dex.portal.clientId);
      expect(claims["email"]).toBe(carol.email);
      expect(claims["groups"]).toEqual(["approvers"]);

      const refused = await signInThroughLoginForm(dispatcher, carol.email, "not-her-password");
      expect(refused.callback).toBeUndefined();
      expect(refused.page).toMatch(/Invalid Email Address and password/i);
    } finally {
      await dispatcher.close();
    }
  });

  it("refuses a wrong password, another person's password and an unknown client", async () => {
    const alice = dexUser(dex, "alice");
    const wrong = await passwordGrant(dex, alice.email, "not-her-password");
    expect(wrong.status).toBe(401);
    expect(wrong.body["error"]).toBe("access_denied");
    expect(wrong.body["id_token"]).toBeUndefined();

    const bobs = await passwordGrant(dex, alice.email, dexUser(dex, "bob").password);
    expect(bobs.status).toBe(401);
    expect(bobs.body["error"]).toBe("access_denied");

    // Dex's password database knows people by email: the username alone signs no one in.
    const byUsername = await passwordGrant(dex, "alice", alice.password);
    expect(byUsername.body["error"]).toBe("access_denied");

    const stranger = await passwordGrant(
      { ...dex, hcpctl: { clientId: "not-a-client" } },
      alice.email,
      alice.password,
    );
    expect(stranger.status).toBe(401);
    expect(stranger.body["error"]).toBe("invalid_client");
  });

  it("names what is wrong in a bad user list before starting anything", async () => {
    await expect(startDex({ workDir, users: [{ username: "Alice!", groups: [] }] })).rejects.toThrow(
      /dex user "Alice!": a username is lower-case/,
    );
    await expect(
      startDex({
        workDir,
        users: [
          { username: "dup", groups: [] },
          { username: "dup", groups: [] },
        ],
      }),
    ).rejects.toThrow(/"dup" is listed twice/);
  });
});
