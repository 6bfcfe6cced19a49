import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { portalApp, type AuditLine, type PortalBackend } from "./app.ts";
import { parseSessionForm } from "./backend.ts";
import { csrfToken } from "./csrf.ts";
import { parseRoleMap } from "./roles.ts";
import { failedCreateTrace } from "./trace-fixture.ts";
import { openSession, sealSession, SESSION_COOKIE, type PortalSession } from "./session-cookie.ts";

const ORIGIN = "https://portal.example";
const NOW = 1_800_000_000_000;

function setup(clusters: HcpCluster[] = []) {
  const key = randomBytes(32);
  const audit: AuditLine[] = [];
  const cordons: [string, string, boolean][] = [];
  const decisions: [string, string, string][] = [];
  const retries: [string, string][] = [];
  const backend: PortalBackend = {
    managementClusters: () => [
      { name: "mc-<1>", phase: "Ready", hostedClusters: 3, capacity: 50, connected: true, cordoned: false },
    ],
    sessions: () => [
      {
        name: "s1",
        owner: "alice@example.com",
        cluster: "ns/demo",
        level: "Admin",
        phase: "Pending",
        reason: "incident",
        decided: false,
        revoked: false,
      },
    ],
    clusters: () => clusters,
    cluster: (namespace, name) =>
      Promise.resolve(
        namespace === "ns1" && name === "broken"
          ? {
              tree: {
                apiVersion: "hcpctl.hcp.aro.dev/v1alpha1" as const,
                kind: "ClusterTree" as const,
                observedAt: "2026-11-28T23:40:00Z",
                root: {
                  kind: "HcpCluster",
                  name: "broken",
                  namespace: "ns1",
                  summary: {
                    ready: "False" as const,
                    severity: "Error" as const,
                    reason: "QuotaExceeded",
                    message: "<quota>",
                  },
                  conditions: [],
                  details: {},
                  children: [],
                },
              },
              stale: ["Ready StatusStale for 45s"],
              failed: true,
              operations: [
                {
                  target: "HcpCluster/broken",
                  id: "op-1",
                  request: "Create",
                  status: "Failed",
                  startTime: "2026-11-28T23:30:00Z",
                  endTime: "2026-11-28T23:35:00Z",
                  requestId: "corr <1>",
                  error: "QuotaExceeded: <quota>",
                },
              ],
              events: [
                {
                  object: "HcpCluster/broken",
                  type: "Warning",
                  reason: "StepFailed",
                  message: "DnsZoneReady: <quota>",
                  count: 3,
                  last: "2026-11-28T23:36:00Z",
                },
              ],
            }
          : undefined,
      ),
    retry: (actor, namespace, name) => {
      retries.push([actor, `${namespace}/${name}`]);
      return Promise.resolve();
    },
    trace: (id) => Promise.resolve(id === "corr <1>" ? failedCreateTrace(id) : undefined),
    requestSession: (actor) => Promise.resolve(`session-of-${actor}`),
    decideSession: (actor, name, decision) => {
      if (name === "own") return Promise.reject(new Error("the owner cannot approve their own session"));
      decisions.push([actor, name, decision]);
      return Promise.resolve();
    },
    revokeSession: () => Promise.resolve(),
    cordon: (actor, mc, on) => {
      cordons.push([actor, mc, on]);
      return Promise.resolve();
    },
  };
  const app = portalApp({
    key,
    publicOrigin: ORIGIN,
    roleMap: parseRoleMap(["sre=operator", "approvers=approver", "viewers=viewer"]),
    backend,
    audit: (line) => audit.push(line),
    now: () => NOW,
  });
  const signIn = (name: string, groups: string[]): PortalSession & { cookie: string } => {
    const session = { id: randomBytes(16).toString("hex"), name, groups, expiresAt: NOW + 3_600_000 };
    return { ...session, cookie: `${SESSION_COOKIE}=${sealSession(key, session)}` };
  };
  const post = (
    path: string,
    who: PortalSession & { cookie: string },
    extra: Record<string, string> = {},
    origin = ORIGIN,
  ) =>
    app.request(path, {
      method: "POST",
      headers: { cookie: who.cookie, origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: csrfToken(key, who.id), ...extra }).toString(),
    });
  return { app, key, audit, cordons, decisions, retries, signIn, post };
}

describe("portal session cookie", () => {
  it("opens what it sealed, and nothing altered, foreign or expired", () => {
    const key = randomBytes(32);
    const s = { id: "i", name: "alice@example.com", groups: ["sre"], expiresAt: NOW + 1 };
    const sealed = sealSession(key, s);
    expect(openSession(key, sealed, NOW)).toEqual(s);
    expect(openSession(randomBytes(32), sealed, NOW)).toBeUndefined();
    expect(openSession(key, sealed.slice(0, -2) + "AA", NOW)).toBeUndefined();
    expect(openSession(key, sealed, NOW + 1)).toBeUndefined();
    expect(openSession(key, undefined, NOW)).toBeUndefined();
  });
});

describe("portal roles", () => {
  it("refuses a mapping to an unknown role, naming it", () => {
    expect(() => parseRoleMap(["sre=admin"])).toThrow(/sre=admin.*viewer, operator, approver/);
    expect(() => parseRoleMap(["=viewer"])).toThrow(/want group=role/);
  });
});

describe("portal routes", () => {
  it("sends a GET without a session to sign in, and refuses a POST without one", async () => {
    const { app } = setup();
    const get = await app.request("/");
    expect(get.status).toBe(302);
    expect(get.headers.get("location")).toBe("/login");
    const post = await app.request("/managementclusters/mc/cordon", {
      method: "POST",
      headers: { origin: ORIGIN },
    });
    expect(post.status).toBe(401);
  });

  it("serves pages with the strict content security policy, escaping what it shows", async () => {
    const { app, signIn } = setup();
    const res = await app.request("/", { headers: { cookie: signIn("alice@example.com", ["sre"]).cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    const body = await res.text();
    expect(body).toContain("mc-&lt;1&gt;");
    expect(body).toContain("Cordon");
    expect(body).toContain("3 / 50");
    expect(body).toContain("connected");
  });

  it("hides cordon from a viewer, and the server refuses it with 403 and an audit line", async () => {
    const { app, signIn, post, audit, cordons } = setup();
    const victor = signIn("victor@example.com", ["viewers"]);
    const page = await (await app.request("/", { headers: { cookie: victor.cookie } })).text();
    expect(page).not.toContain("<button>Cordon");
    const res = await post("/managementclusters/mc-1/cordon", victor);
    expect(res.status).toBe(403);
    expect(cordons).toEqual([]);
    expect(audit).toEqual([
      expect.objectContaining({
        who: "victor@example.com",
        action: "managementcluster.cordon",
        result: "forbidden",
      }),
    ]);
  });

  it("cordons for an operator with a valid token and origin, acting for the person", async () => {
    const { signIn, post, audit, cordons } = setup();
    const alice = signIn("alice@example.com", ["sre"]);
    expect((await post("/managementclusters/mc-1/cordon", alice)).status).toBe(303);
    expect(cordons).toEqual([["alice@example.com", "mc-1", true]]);
    expect(audit.at(-1)).toEqual({
      audit: "portal",
      who: "alice@example.com",
      roles: ["operator"],
      action: "managementcluster.cordon",
      target: { kind: "ManagementCluster", name: "mc-1" },
      result: "ok",
    });
  });

  it("refuses a POST from another origin or with a wrong CSRF token", async () => {
    const { app, signIn, post, cordons } = setup();
    const alice = signIn("alice@example.com", ["sre"]);
    expect((await post("/managementclusters/mc-1/cordon", alice, {}, "https://evil.example")).status).toBe(
      403,
    );
    const wrong = await app.request("/managementclusters/mc-1/cordon", {
      method: "POST",
      headers: { cookie: alice.cookie, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: "csrf=not-the-token",
    });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toMatch(/CSRF/);
    expect(cordons).toEqual([]);
  });

  it("lets an approver decide but not an operator, and reports the backend's refusal", async () => {
    const { signIn, post, decisions, audit } = setup();
    const carol = signIn("carol@example.com", ["approvers"]);
    const alice = signIn("alice@example.com", ["sre"]);
    expect((await post("/sessions/s1/approve", alice)).status).toBe(403);
    expect((await post("/sessions/s1/approve", carol)).status).toBe(303);
    expect(decisions).toEqual([["carol@example.com", "s1", "Approved"]]);
    const own = await post("/sessions/own/deny", carol);
    expect(own.status).toBe(400);
    expect(await own.text()).toMatch(/owner cannot approve/);
    expect(audit.at(-1)).toEqual(expect.objectContaining({ result: "error", action: "session.decide" }));
  });
});

describe("portal sign-out", () => {
  it("clears the session cookie on a POST with the token, and refuses one without", async () => {
    const { app, signIn, post } = setup();
    const alice = signIn("alice@example.com", ["sre"]);
    const out = await post("/logout", alice);
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/^__Host-hcp-portal=;.*Max-Age=0/);
    const forged = await app.request("/logout", {
      method: "POST",
      headers: { cookie: alice.cookie, origin: ORIGIN },
    });
    expect(forged.status).toBe(403);
  });
});

describe("portal session request form", () => {
  it("takes a complete form and refuses each bad field by name", () => {
    const ok = { namespace: "ns", cluster: "demo", level: "Admin", reason: "incident 42" };
    expect(parseSessionForm(ok)).toEqual({ ...ok, ttlSeconds: 3600 });
    expect(() => parseSessionForm({ ...ok, level: "Root" })).toThrow(
      /level must be one of ReadOnly, Admin, got "Root"/,
    );
    expect(() => parseSessionForm({ ...ok, reason: " " })).toThrow(/reason/);
    expect(() => parseSessionForm({ ...ok, cluster: "" })).toThrow(/cluster/);
    expect(() => parseSessionForm({ ...ok, ttlSeconds: "60" })).toThrow(
      /ttlSeconds must be a whole number from 300 to 43200, got "60"/,
    );
  });
});

describe("portal sessions page", () => {
  it("offers approve to an approver who is not the owner, and the request form to an operator only", async () => {
    const { app, signIn } = setup();
    const read = async (who: string, groups: string[]) =>
      (await app.request("/sessions", { headers: { cookie: signIn(who, groups).cookie } })).text();
    const carol = await read("carol@example.com", ["approvers"]);
    expect(carol).toContain("Approve s1");
    expect(carol).not.toContain("Request a session");
    const aliceAsApprover = await read("alice@example.com", ["approvers"]);
    expect(aliceAsApprover).not.toContain("Approve s1");
    const bob = await read("bob@example.com", ["sre"]);
    expect(bob).toContain("Request a session");
    expect(bob).not.toContain("Approve s1");
    const victor = await read("victor@example.com", ["viewers"]);
    expect(victor).toContain("alice@example.com");
    expect(victor).not.toMatch(/Approve|Revoke|Request a session/);
  });
});

function cluster(
  i: number,
  over: { state?: string; version?: string; mc?: string; sub?: string } = {},
): HcpCluster {
  return {
    metadata: { name: `c${String(i).padStart(3, "0")}`, namespace: `ns${i % 3}`, uid: `uid-${i}` },
    spec: {
      version: { id: over.version ?? "4.19.7", channelGroup: "stable" },
      platform: { azure: { subscriptionId: over.sub ?? `sub-${i % 2}` } },
    },
    status: {
      phase: over.state ?? "Ready",
      managementCluster: over.mc ?? `mgmt-${(i % 2) + 1}`,
      conditions: [
        { type: "Ready", status: "True", reason: "AsExpected", message: "", lastTransitionTime: "" },
      ],
    },
  } as unknown as HcpCluster;
}

describe("portal clusters list", () => {
  const many = Array.from({ length: 120 }, (_, i) =>
    cluster(i, i === 7 ? { state: "Failed", version: "4.18.2", mc: "mgmt-<2>" } : {}),
  );
  const list = async (query: string) => {
    const { app, signIn } = setup(many);
    const res = await app.request(`/clusters${query}`, {
      headers: { cookie: signIn("victor@example.com", ["viewers"]).cookie },
    });
    expect(res.status).toBe(200);
    return res.text();
  };
  const rows = (body: string) => [...body.matchAll(/<a href="\/clusters\/([^"]+)">/g)].map((m) => m[1]);

  it("pages the clusters on the server, 50 at a time, sorted by namespace and name", async () => {
    const first = await list("");
    expect(first).toContain("120 clusters match");
    expect(rows(first)).toHaveLength(50);
    expect(rows(first)[0]).toBe("ns0/c000");
    expect(first).toContain("Page 1 of 3");
    const last = await list("?page=3");
    expect(rows(last)).toHaveLength(20);
    expect(last).toContain('rel="prev"');
    // A page past the end shows the last one; a malformed one the first.
    expect(await list("?page=99")).toContain("Page 3 of 3");
    expect(await list("?page=-1")).toContain("Page 1 of 3");
  });

  it("searches names, IDs and subscriptions, and filters by state, version and management cluster", async () => {
    expect(rows(await list("?q=C01"))).toEqual([
      "ns0/c012",
      "ns0/c015",
      "ns0/c018",
      "ns1/c010",
      "ns1/c013",
      "ns1/c016",
      "ns1/c019",
      "ns2/c011",
      "ns2/c014",
      "ns2/c017",
    ]);
    expect(rows(await list("?q=uid-7"))).toContain("ns1/c007");
    const failed = await list("?state=Failed");
    expect(rows(failed)).toEqual(["ns1/c007"]);
    // Filter choices come from every cluster, escaped.
    expect(failed).toContain('<option value="mgmt-&lt;2&gt;"');
    expect(rows(await list("?version=4.18.2&managementCluster=mgmt-%3C2%3E"))).toEqual(["ns1/c007"]);
    expect(rows(await list("?subscription=sub-1&state=Failed"))).toEqual(["ns1/c007"]);
    expect(await list("?state=Ready&version=4.18.2")).toContain("0 clusters match");
  });

  it("answers a cluster that does not exist with 404", async () => {
    const { app, signIn } = setup(many);
    const res = await app.request("/clusters/ns0/nope", {
      headers: { cookie: signIn("alice@example.com", ["sre"]).cookie },
    });
    expect(res.status).toBe(404);
  });
});

describe("portal cluster page", () => {
  it("shows hcpctl's tree and staleness, escaped, and offers retry to an operator only; the server refuses a viewer's", async () => {
    const { app, signIn, post, retries, audit } = setup();
    const bob = signIn("bob@example.com", ["sre"]);
    const page = await (
      await app.request("/clusters/ns1/broken", { headers: { cookie: bob.cookie } })
    ).text();
    expect(page).toContain("<strong>HcpCluster/broken</strong>");
    expect(page).toContain("&lt;quota&gt;");
    expect(page).toContain("Stale: Ready StatusStale for 45s");
    expect(page).toContain("Retry the failed step");
    expect(page).toContain('value="broken"');
    const victor = signIn("victor@example.com", ["viewers"]);
    const seen = await (
      await app.request("/clusters/ns1/broken", { headers: { cookie: victor.cookie } })
    ).text();
    expect(page).toContain('<h2 id="operations">ARM operations</h2>');
    expect(page).toContain('<a href="/trace?id=corr+%3C1%3E">corr &lt;1&gt;</a>');
    expect(page).toContain("QuotaExceeded: &lt;quota&gt;");
    expect(page).toContain("<td>StepFailed</td>");
    expect(seen).not.toContain("Retry the failed step");
    expect(seen).not.toContain("Request a session");
    expect((await post("/clusters/ns1/broken/retry", victor)).status).toBe(403);
    expect(retries).toEqual([]);
    const ok = await post("/clusters/ns1/broken/retry", bob);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/clusters/ns1/broken");
    expect(retries).toEqual([["bob@example.com", "ns1/broken"]]);
    expect(audit.map((a) => [a.who, a.action, a.result])).toEqual([
      ["victor@example.com", "operation.retry", "forbidden"],
      ["bob@example.com", "operation.retry", "ok"],
    ]);
  });
});

describe("portal trace page", () => {
  it("renders hcpctl's RequestTrace for a request ID as a table of hops, says so when none carries it, and refuses an overlong ID", async () => {
    const { app, signIn } = setup();
    const victor = signIn("victor@example.com", ["viewers"]);
    const get = async (q: string) => app.request(`/trace${q}`, { headers: { cookie: victor.cookie } });
    const form = await (await get("")).text();
    expect(form).toContain('<input type="search" name="id" value="" required />');
    expect(form).not.toContain('role="status"');
    const found = await (await get("?id=corr+%3C1%3E")).text();
    expect(found).toContain("<h2>Create of HcpCluster/ns1/broken</h2>");
    expect(found).toContain("<td>Result</td>");
    expect(found).toContain("Failed: QuotaExceeded: &lt;quota&gt;");
    expect(found).toContain("<td>300</td>");
    const none = await (await get("?id=nothing")).text();
    expect(none).toContain("No HcpCluster, NodePool or operation record carries the request ID nothing");
    const long = await get(`?id=${"x".repeat(201)}`);
    expect(long.status).toBe(400);
    expect(await long.text()).toContain("id:");
  });
});
