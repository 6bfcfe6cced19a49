import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpServer, request, type Server } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import client from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCA, issueCert } from "../../hack/harness/certs.ts";
import type { AccessSession } from "../../operators/api/v1alpha1/accesssession.ts";
import { createLogger } from "../../operators/runtime/logger.ts";
import { SessionGate, verbOf, type GateSources } from "../../operators/sessiongate/gate.ts";
import { gateMetrics } from "../../operators/sessiongate/metrics.ts";
import { clusterInfo } from "../support/region.ts";

const b64 = async (p: string): Promise<string> => (await readFile(p)).toString("base64");

function session(
  name: string,
  level: "ReadOnly" | "Admin",
  extra: Partial<AccessSession["spec"]> = {},
): AccessSession {
  return {
    metadata: { name, resourceVersion: "1" },
    spec: {
      owner: "alice@example.com",
      clusterRef: { namespace: "ns", name: "c1" },
      level,
      reason: "incident 1",
      ttlSeconds: 3600,
      approval: { decision: "Approved", by: "bob@example.com" },
      ...extra,
    },
    status: {
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      credentialSecret: `${name}-kubeconfig`,
    },
  };
}

describe("SessionGate", () => {
  let dir: string;
  let upstream: HttpsServer;
  let gateServer: Server;
  let gate: SessionGate;
  let base: string;
  const sessions = new Map<string, AccessSession>();
  const audit: Record<string, unknown>[] = [];
  const registry = new client.Registry();
  const metrics = gateMetrics(registry);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sessiongate-"));
    const ca = await createCA(dir, "kas");
    const serving = await issueCert(ca, dir, {
      name: "kas",
      commonName: "kas",
      ipAddresses: ["127.0.0.1"],
      usage: "server",
    });
    const clientCert = await issueCert(ca, dir, { name: "alice", commonName: "alice", usage: "client" });
    upstream = createHttpsServer(
      {
        ca: await readFile(ca.certPath),
        cert: await readFile(serving.certPath),
        key: await readFile(serving.keyPath),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        if (req.url?.startsWith("/api/v1/pods?watch=true")) {
          res.writeHead(200, { "content-type": "application/json" });
          res.write('{"type":"ADDED"}\n');
          return;
        }
        const peer = (
          req.socket as Socket & { getPeerCertificate(): { subject: { CN: string } } }
        ).getPeerCertificate();
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ method: req.method, url: req.url, headers: req.headers, cn: peer.subject.CN }),
        );
      },
    );
    upstream.on("upgrade", (req, socket: Socket) => {
      socket.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n");
      socket.on("data", (d: Buffer) => socket.write(`echo:${d.toString()}`));
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const kubeconfig = [
      "apiVersion: v1",
      "kind: Config",
      "current-context: s",
      "contexts: [{name: s, context: {cluster: kas, user: alice}}]",
      `clusters: [{name: kas, cluster: {server: "https://127.0.0.1:${(upstream.address() as AddressInfo).port}", certificate-authority-data: "${await b64(ca.certPath)}"}}]`,
      `users: [{name: alice, user: {client-certificate-data: "${await b64(clientCert.certPath)}", client-key-data: "${await b64(clientCert.keyPath)}"}}]`,
    ].join("\n");
    const sources: GateSources = {
      session: (name) => sessions.get(name),
      credential: () => ({ resourceVersion: "1", kubeconfig }),
    };
    gate = new SessionGate({
      sources,
      metrics,
      log: createLogger({}, "info", (line) => audit.push(JSON.parse(line) as Record<string, unknown>)),
      // The authentication seam: the bearer token is the user's name (OIDC comes with Dex).
      authenticate: (authorization) =>
        Promise.resolve(
          authorization?.startsWith("Bearer ")
            ? { user: authorization.slice(7) }
            : { error: "no bearer token" },
        ),
    });
    gateServer = createHttpServer((req, res) => gate.handle(req, res));
    gateServer.on("upgrade", (req, socket, head) => gate.upgrade(req, socket, head));
    await new Promise<void>((r) => gateServer.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(gateServer.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    gate.close();
    gateServer.closeAllConnections();
    upstream.closeAllConnections();
    await new Promise((r) => gateServer.close(r));
    await new Promise((r) => upstream.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it("forwards the owner's request with the session's certificate, without credentials or impersonation", async () => {
    sessions.set("s1", session("s1", "ReadOnly"));
    const res = await fetch(`${base}/sessions/s1/kas/api/v1/namespaces/x/pods?limit=5`, {
      headers: {
        authorization: "Bearer alice@example.com",
        "impersonate-user": "system:admin",
        "Impersonate-Group": "system:masters",
      },
    });
    expect(res.status).toBe(200);
    const seen = (await res.json()) as { url: string; headers: Record<string, string>; cn: string };
    expect(seen.url).toBe("/api/v1/namespaces/x/pods?limit=5");
    expect(seen.cn).toBe("alice");
    expect(
      Object.keys(seen.headers).filter((h) => h.startsWith("impersonate-") || h === "authorization"),
    ).toEqual([]);
    const line = audit.find((l) => l.session === "s1" && l.status === 200);
    expect(line).toMatchObject({
      audit: "sessiongate",
      who: "alice@example.com",
      cluster: "ns/c1",
      level: "ReadOnly",
      verb: "list",
      method: "GET",
    });
  });

  it("refuses no token with 401 and a challenge, another user, a write on ReadOnly and an unusable session with 403", async () => {
    sessions.set("s2", session("s2", "ReadOnly"));
    sessions.set("s3", session("s3", "Admin", { approval: { decision: "Denied", by: "bob@example.com" } }));
    const noToken = await fetch(`${base}/sessions/s2/kas/api`);
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get("www-authenticate")).toMatch(/^Bearer /);
    const other = await fetch(`${base}/sessions/s2/kas/api`, {
      headers: { authorization: "Bearer mallory@example.com" },
    });
    expect(other.status).toBe(403);
    expect(await other.text()).toContain("belongs to another user");
    const write = await fetch(`${base}/sessions/s2/kas/api/v1/namespaces/x/pods`, {
      method: "POST",
      body: "{}",
      headers: { authorization: "Bearer alice@example.com" },
    });
    expect(write.status).toBe(403);
    expect(await write.text()).toContain("ReadOnly");
    const denied = await fetch(`${base}/sessions/s3/kas/api`, {
      headers: { authorization: "Bearer alice@example.com" },
    });
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain("Denied");
    expect(audit.filter((l) => l.session === "s2" && l.status === 403)).toHaveLength(2);
  });

  it("cuts a watch held open when the session is revoked, and refuses the next request", async () => {
    sessions.set("s4", session("s4", "ReadOnly"));
    const res = await fetch(`${base}/sessions/s4/kas/api/v1/pods?watch=true`, {
      headers: { authorization: "Bearer alice@example.com" },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first: { value?: Uint8Array } = await reader.read();
    expect(Buffer.from(first.value ?? new Uint8Array()).toString()).toContain("ADDED");
    expect(gate.open("s4")).toBe(1);
    sessions.set("s4", session("s4", "ReadOnly", { revocation: { by: "alice@example.com" } }));
    gate.sessionChanged("s4");
    await expect(reader.read()).rejects.toThrow();
    expect(gate.open("s4")).toBe(0);
    expect((await metrics.streamsCut.get()).values.find((v) => v.labels.reason === "Revoked")?.value).toBe(1);
    const next = await fetch(`${base}/sessions/s4/kas/api`, {
      headers: { authorization: "Bearer alice@example.com" },
    });
    expect(next.status).toBe(403);
    expect(await next.text()).toContain("Revoked");
  });

  it("cuts a watch at the session's expiresAt with no informer event", async () => {
    const soon = session("s7", "ReadOnly");
    soon.status = { ...soon.status, expiresAt: new Date(Date.now() + 500).toISOString() };
    sessions.set("s7", soon);
    const res = await fetch(`${base}/sessions/s7/kas/api/v1/pods?watch=true`, {
      headers: { authorization: "Bearer alice@example.com" },
    });
    const reader = res.body!.getReader();
    await reader.read();
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();
    expect(gate.open("s7")).toBe(0);
    expect((await metrics.streamsCut.get()).values.find((v) => v.labels.reason === "Expired")?.value).toBe(1);
  });

  it("pipes an upgrade both ways after the upstream answers 101, and refuses one on a ReadOnly session", async () => {
    sessions.set("s5", session("s5", "Admin"));
    sessions.set("s6", session("s6", "ReadOnly"));
    const upgrade = (name: string): Promise<{ status: number; socket?: Socket }> =>
      new Promise((resolve, reject) => {
        const req = request(`${base}/sessions/${name}/kas/api/v1/namespaces/x/pods/p/exec?command=sh`, {
          method: "POST",
          headers: { authorization: "Bearer alice@example.com", connection: "Upgrade", upgrade: "SPDY/3.1" },
        });
        req.on("upgrade", (res, socket: Socket) => resolve({ status: res.statusCode ?? 0, socket }));
        req.on("response", (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0 });
        });
        req.on("error", reject);
        req.end();
      });
    const refused = await upgrade("s6");
    expect(refused.status).toBe(403);
    const piped = await upgrade("s5");
    expect(piped.status).toBe(101);
    const echoed = new Promise<string>((r) => piped.socket!.once("data", (d: Buffer) => r(d.toString())));
    piped.socket!.write("ls");
    expect(await echoed).toBe("echo:ls");
    expect(gate.open("s5")).toBe(1);
    const closed = new Promise((r) => piped.socket!.once("close", r));
    sessions.delete("s5");
    gate.sessionChanged("s5");
    await closed;
    expect(gate.open("s5")).toBe(0);
  });

  it("names Kubernetes verbs", () => {
    const q = new URLSearchParams();
    expect(verbOf("GET", "/api/v1/namespaces/x/pods", q)).toBe("list");
    expect(verbOf("GET", "/apis/apps/v1/namespaces/x/deployments/d", q)).toBe("get");
    expect(verbOf("GET", "/api/v1/namespaces", q)).toBe("list");
    expect(verbOf("GET", "/api/v1/namespaces/x", q)).toBe("get");
    expect(verbOf("GET", "/api/v1/pods", new URLSearchParams("watch=true"))).toBe("watch");
    expect(verbOf("DELETE", "/api/v1/namespaces/x/pods/p", q)).toBe("delete");
  });
});

describe("SessionGate in front of a real kube-apiserver", () => {
  const sessions = new Map<string, AccessSession>();
  let gate: SessionGate;
  let gateServer: Server;
  let base: string;
  const alice = { authorization: "Bearer alice@example.com" };

  beforeAll(async () => {
    // The harness's admin kubeconfig (client certificate, key and CA inline) stands for the
    // credential the session controller writes.
    const kubeconfig = await readFile(clusterInfo("service").kubeconfigPath, "utf8");
    gate = new SessionGate({
      sources: {
        session: (name) => sessions.get(name),
        credential: () => ({ resourceVersion: "1", kubeconfig }),
      },
      metrics: gateMetrics(new client.Registry()),
      log: createLogger({}, "error"),
      authenticate: (authorization) =>
        Promise.resolve(authorization ? { user: authorization.slice(7) } : { error: "no bearer token" }),
    });
    gateServer = createHttpServer((req, res) => gate.handle(req, res));
    await new Promise<void>((r) => gateServer.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(gateServer.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    gate.close();
    gateServer.closeAllConnections();
    await new Promise((r) => gateServer.close(r));
  });

  it("forwards as the session's certificate, never as an impersonated user", async () => {
    sessions.set("admin", session("admin", "Admin"));
    const res = await fetch(`${base}/sessions/admin/kas/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: "POST",
      headers: { ...alice, "content-type": "application/json", "impersonate-user": "someone-else" },
      body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
    });
    expect(res.status).toBe(201);
    const review = (await res.json()) as { status: { userInfo: { username: string } } };
    expect(review.status.userInfo.username).not.toBe("someone-else");
  });

  it("ends a watch held open on the apiserver when the session is revoked", async () => {
    sessions.set("watcher", session("watcher", "ReadOnly"));
    const res = await fetch(`${base}/sessions/watcher/kas/api/v1/namespaces?watch=true`, {
      headers: alice,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first: { value?: Uint8Array } = await reader.read();
    expect(Buffer.from(first.value ?? new Uint8Array()).toString()).toContain('"type":"ADDED"');
    expect(gate.open("watcher")).toBe(1);
    sessions.set("watcher", session("watcher", "ReadOnly", { revocation: { by: "alice@example.com" } }));
    gate.sessionChanged("watcher");
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();
    expect(gate.open("watcher")).toBe(0);
    const next = await fetch(`${base}/sessions/watcher/kas/api/v1/namespaces/default/configmaps`, {
      headers: alice,
    });
    expect(next.status).toBe(403);
  });
});
