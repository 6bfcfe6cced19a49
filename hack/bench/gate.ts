/**
 * `npm run bench -- --scenario gate [--n 2000]`: what the session gate adds to a request (issue
 * 36: ≤ 10 ms at p99). A GET of one namespace from a real kube-apiserver (the bench region's
 * service apiserver), N times one at a time, through the gate over TLS as the session's owner, and
 * the same GET sent to the apiserver directly with the same client certificate (the floor),
 * interleaved so both see the same machine. The gate is operators/sessiongate's SessionGate behind
 * a node:https server as GateServer runs it, audit lines formatted and dropped, each request's
 * bearer token a real Dex ID token (alice's, from the password grant) verified by the gate's OIDC
 * authenticator; its session and credential come from memory where GateServer reads its
 * informers' caches (a map lookup either way).
 */
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { Agent, createServer, request, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import client from "prom-client";
import type { AccessSession } from "../../operators/api/v1alpha1/accesssession.ts";
import { createLogger } from "../../operators/runtime/logger.ts";
import { SessionGate, type Authenticate } from "../../operators/sessiongate/gate.ts";
import { gateMetrics } from "../../operators/sessiongate/metrics.ts";
import { createCA, issueCert } from "../harness/certs.ts";
import { passwordGrant, startDex, type Dex } from "../harness/dex.ts";
import { oidcAuthenticator } from "../../operators/sessiongate/oidc.ts";
import { startRegion } from "../harness/region.ts";
import { percentile, type Figure, type Scenario, type ScenarioResult } from "./types.ts";

const SESSION = "bench-session";
const PATH = "/api/v1/namespaces/default";
const TARGET_ADDED_MS = 10;

interface KubeconfigDoc {
  clusters: Array<{ cluster: { server: string; "certificate-authority-data": string } }>;
  users: Array<{ user: { "client-certificate-data": string; "client-key-data": string } }>;
}

/** The apiserver's URL and an Agent holding the kubeconfig's client certificate: the floor's client. */
function directClient(kubeconfig: string): { server: URL; agent: Agent } {
  const doc = load(kubeconfig) as KubeconfigDoc;
  const cluster = doc.clusters[0]?.cluster;
  const user = doc.users[0]?.user;
  if (!cluster || !user) throw new Error("the service kubeconfig has no cluster or user");
  const b = (s: string) => Buffer.from(s, "base64");
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: b(cluster["certificate-authority-data"]),
    cert: b(user["client-certificate-data"]),
    key: b(user["client-key-data"]),
  });
  return { server: new URL(cluster.server), agent };
}

/** One GET, its body read; resolves to its milliseconds, rejects on a status other than 200. */
function timedGet(url: URL, agent: Agent, headers: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${url.href}: ${res.statusCode}: ${Buffer.concat(chunks).toString()}`));
          return;
        }
        resolve(performance.now() - started);
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

function session(owner: string): AccessSession {
  return {
    metadata: { name: SESSION, resourceVersion: "1" },
    spec: {
      owner,
      clusterRef: { namespace: "bench", name: "bench" },
      level: "ReadOnly",
      reason: "bench",
      ttlSeconds: 3600,
      approval: { decision: "Approved", by: "bob@example.com" },
    },
    status: {
      phase: "Active",
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      credentialSecret: `access-session-${SESSION}`,
    },
  };
}

async function startGate(
  dir: string,
  kubeconfig: string,
  dex: Dex,
  owner: string,
): Promise<{ server: Server; gate: SessionGate; authenticate: Authenticate; url: URL; agent: Agent }> {
  const ca = await createCA(dir, "gate");
  const serving = await issueCert(ca, dir, {
    name: "gate",
    commonName: "gate",
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const s = session(owner);
  const authenticate = oidcAuthenticator({
    issuer: dex.issuer,
    audiences: [dex.hcpctl.clientId],
    caPem: await readFile(dex.caPath, "utf8"),
  });
  const gate = new SessionGate({
    sources: {
      session: (name) => (name === SESSION ? s : undefined),
      credential: () => ({ resourceVersion: "1", kubeconfig }),
    },
    metrics: gateMetrics(new client.Registry()),
    // Formatted as in production, then dropped: the bench measures the gate, not a terminal.
    log: createLogger({}, "info", () => undefined),
    authenticate,
  });
  const server = createServer(
    { cert: await readFile(serving.certPath), key: await readFile(serving.keyPath) },
    (req, res) => gate.handle(req, res),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: await readFile(ca.certPath) });
  return {
    server,
    gate,
    authenticate,
    url: new URL(`https://127.0.0.1:${port}/sessions/${SESSION}/kas${PATH}`),
    agent,
  };
}

/** N of each, alternating which goes first so neither always follows the other's work. */
async function interleaved(
  n: number,
  direct: () => Promise<number>,
  gate: () => Promise<number>,
): Promise<{ floor: number[]; gated: number[] }> {
  const floor: number[] = [];
  const gated: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) floor.push(await direct());
    gated.push(await gate());
    if (i % 2 === 1) floor.push(await direct());
  }
  return { floor, gated };
}

const ms = (v: number) => Math.round(v * 100) / 100;

export async function benchGate(n: number): Promise<ScenarioResult> {
  const region = await startRegion({ managementClusters: 0, broker: false });
  const dir = await mkdtemp(join(tmpdir(), "bench-gate-"));
  let dex: Dex | undefined;
  try {
    dex = await startDex({ workDir: dir });
    const alice = dex.users.find((u) => u.username === "alice");
    if (!alice) throw new Error("Dex has no alice");
    const grant = await passwordGrant(dex, alice.email, alice.password);
    const token = grant.body["id_token"];
    if (typeof token !== "string") throw new Error(`Dex gave no ID token: ${JSON.stringify(grant.body)}`);
    const service = region.clusters.find((c) => c.role === "service");
    if (!service) throw new Error("the region has no service cluster");
    const kubeconfig = await readFile(service.kubeconfigPath, "utf8");
    const direct = directClient(kubeconfig);
    const directUrl = new URL(PATH, direct.server);
    const g = await startGate(dir, kubeconfig, dex, alice.email);
    const auth = { authorization: `Bearer ${token}` };
    try {
      // Warm both paths: TLS sessions, the gate's upstream Agent, the apiserver's caches, the JIT.
      for (let i = 0; i < 200; i++) {
        await timedGet(directUrl, direct.agent);
        await timedGet(g.url, g.agent, auth);
      }
      const { floor, gated } = await interleaved(
        n,
        () => timedGet(directUrl, direct.agent),
        () => timedGet(g.url, g.agent, auth),
      );
      // Where the added time goes: the ID token's verification alone, in this process.
      const verify: number[] = [];
      for (let i = 0; i < n; i++) {
        const started = performance.now();
        await g.authenticate(auth.authorization);
        verify.push(performance.now() - started);
      }
      verify.sort((a, b) => a - b);
      floor.sort((a, b) => a - b);
      gated.sort((a, b) => a - b);
      const at = (xs: number[], p: number) => ms(percentile(xs, p));
      const figures: Figure[] = [
        { name: "GET through the gate p50", value: at(gated, 50), unit: "ms", detail: `${n} GETs ${PATH}` },
        { name: "GET through the gate p99", value: at(gated, 99), unit: "ms" },
        {
          name: "GET direct (floor) p50",
          value: at(floor, 50),
          unit: "ms",
          detail: "same client certificate",
        },
        { name: "GET direct (floor) p99", value: at(floor, 99), unit: "ms" },
        { name: "ID token verification p50", value: at(verify, 50), unit: "ms", detail: "of the added time" },
        { name: "ID token verification p99", value: at(verify, 99), unit: "ms" },
        { name: "gate added p50", value: ms(at(gated, 50) - at(floor, 50)), unit: "ms" },
        { name: "gate added p99", value: ms(at(gated, 99) - at(floor, 99)), unit: "ms" },
      ];
      const comparison = (p: number, target?: number) => {
        const ours = at(gated, p);
        const peer = at(floor, p);
        const added = ms(ours - peer);
        return {
          name: `GET p${p} through the gate`,
          unit: "ms",
          ours,
          against: "the same GET direct with the same certificate",
          peer,
          ratio: Math.round((ours / peer) * 100) / 100,
          note: `adds ${added} ms`,
          ...(target === undefined ? {} : { target: `adds <= ${target} ms`, met: added <= target }),
        };
      };
      return {
        figures,
        comparisons: [comparison(50), comparison(99, TARGET_ADDED_MS)],
        report: { n, path: PATH, gated, floor },
      };
    } finally {
      g.gate.close();
      g.server.closeAllConnections();
      await new Promise((r) => g.server.close(r));
      g.agent.destroy();
      direct.agent.destroy();
    }
  } finally {
    await dex?.stop();
    await rm(dir, { recursive: true, force: true });
    await region.stop();
  }
}

export const gateScenario: Scenario = {
  describe: "a GET through the session gate beside the same GET direct to the kube-apiserver",
  run: ({ n }) => benchGate(n ?? 2000),
};
