/**
 * An agent renews its broker client certificate while works flow, against a real mosquitto (TLS,
 * client certificates, ACLs) of this test's own, the real service and management apiservers,
 * maestro-server signing with the broker's CA. The agent starts with a certificate 95% through its
 * life, kept in its credentials Secret on the management cluster: it asks at once, gets a new one,
 * stores it and reconnects. Works created before, during and after the switch (and some changed)
 * are all applied at their current generation and reported back; then, once the old certificate
 * has expired, a new agent started from the Secret alone connects and applies a work.
 */
import { X509Certificate, createPublicKey, createPrivateKey } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBroker, type Broker } from "../../hack/harness/broker.ts";
import { SecretResource } from "../../operators/api/core.ts";
import { ManifestWorkResource, type Manifest, type ManifestWork } from "../../operators/api/work/v1.ts";
import { certificateSummary } from "../../operators/maestro-agent/broker-credentials.ts";
import { MaestroAgent } from "../../operators/maestro-agent/controller.ts";
import { AgentCertificateSigner } from "../../operators/maestro-server/agent-certificates.ts";
import { MaestroServer } from "../../operators/maestro-server/controller.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";
import { issueClientCertificate } from "../support/certificates.ts";
import { clientFor, configMapType, eventually, scratchDir } from "../support/fixtures.ts";
import { counterValue } from "../support/metrics.ts";
import { configMapManifest, ensureNamespace } from "../support/manifests.ts";
import { kubeConfigFor } from "../support/region.ts";

const CONSUMER = "mgmt-1";
const SECRET = "maestro-agent-broker";
const HOUR = 3_600_000;
const fastBackoff = { initialMs: 100, maxMs: 1000 };

type SecretObject = KubeObject & { data?: Record<string, string> };

let broker: Broker;
let service: KubeClient;
let mgmt: KubeClient;
let target = "";
let secretNamespace = "";
let oldCertificate: X509Certificate;
let server: MaestroServer;
const stops: AbortController[] = [];
const registries: ClusterRegistry[] = [];
let scratch: { path: string; remove(): Promise<void> };
let firstAgent: { agent: MaestroAgent; stop: AbortController };

async function startAgent(opts: {
  withFiles: boolean;
}): Promise<{ agent: MaestroAgent; stop: AbortController }> {
  const stop = new AbortController();
  stops.push(stop);
  const files = opts.withFiles ? await broker.credentials(CONSUMER) : undefined;
  const agent = new MaestroAgent({
    consumer: CONSUMER,
    kube: mgmt,
    broker: {
      url: broker.url,
      caFile: files?.caPath ?? "",
      certFile: files?.certPath ?? "",
      keyFile: files?.keyPath ?? "",
      backoff: fastBackoff,
    },
    credentialsSecret: `${secretNamespace}/${SECRET}`,
    statusSyncMs: 300,
    heartbeatMs: 200,
  });
  void agent.start(stop.signal);
  return { agent, stop };
}

let workCounter = 0;
async function createWork(manifests: Manifest[]): Promise<ManifestWork> {
  return service.create<ManifestWork>(ManifestWorkResource, {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: { name: `renewal-${process.pid}-${workCounter++}`, namespace: CONSUMER },
    spec: { workload: { manifests } },
  });
}

/** Applied and Available for the work's current generation, as the service cluster shows it. */
async function settled(w: ManifestWork): Promise<boolean> {
  const now = await service.find<ManifestWork>(ManifestWorkResource, w.metadata.name ?? "", CONSUMER);
  const cond = (type: string) => now?.status?.conditions?.find((c) => c.type === type);
  return (
    cond("Applied")?.status === "True" &&
    cond("Applied")?.observedGeneration === now?.metadata.generation &&
    cond("Available")?.status === "True"
  );
}

async function storedCertificate(): Promise<{ cert: X509Certificate; keyPem: string }> {
  const s = await mgmt.get<SecretObject>(SecretResource, SECRET, secretNamespace);
  const decode = (k: string) => Buffer.from(s.data?.[k] ?? "", "base64").toString("utf8");
  return { cert: new X509Certificate(decode("tls.crt")), keyPem: decode("tls.key") };
}

beforeAll(async () => {
  scratch = await scratchDir("renewal");
  broker = await startBroker({ workDir: scratch.path });
  service = clientFor("service");
  mgmt = clientFor(CONSUMER);
  await ensureNamespace(service, CONSUMER);
  target = `renewal-applied-${process.pid}`;
  secretNamespace = `renewal-agent-${process.pid}`;
  await ensureNamespace(mgmt, target);
  await ensureNamespace(mgmt, secretNamespace);

  const ca = {
    certPem: await readFile(broker.caPath, "utf8"),
    keyPem: await readFile(broker.caKeyPath, "utf8"),
  };
  // 95% of its ten minutes gone: due for renewal at once, expiring half a minute from now.
  const now = Date.now();
  const first = await issueClientCertificate(ca, {
    commonName: CONSUMER,
    notBefore: new Date(now - 570_000),
    notAfter: new Date(now + 30_000),
  });
  oldCertificate = new X509Certificate(first.cert);
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  await mgmt.create(SecretResource, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SECRET, namespace: secretNamespace },
    data: { "ca.crt": b64(ca.certPem), "tls.crt": b64(first.cert), "tls.key": b64(first.key) },
  });

  const clusters = new ClusterRegistry();
  registries.push(clusters);
  const maestro = await broker.credentials("maestro");
  const serverStop = new AbortController();
  stops.push(serverStop);
  server = new MaestroServer({
    cluster: clusters.add("service", kubeConfigFor("service")),
    broker: {
      url: broker.url,
      caFile: maestro.caPath,
      certFile: maestro.certPath,
      keyFile: maestro.keyPath,
      clientId: "maestro-renewal-test",
      backoff: fastBackoff,
    },
    agentCertificates: new AgentCertificateSigner({
      certFile: broker.caPath,
      keyFile: broker.caKeyPath,
      lifetimeMs: HOUR,
    }),
  });
  void server.start(serverStop.signal);
  await eventually("maestro-server connected", () => server.connection.isConnected());
}, 60_000);

afterAll(async () => {
  for (const s of stops) s.abort();
  for (const r of registries) r.stopAll();
  for (const w of await service.listAll<ManifestWork>(ManifestWorkResource, { namespace: CONSUMER }).then(
    (l) => l.items,
    () => [],
  ))
    if (w.metadata.name?.startsWith(`renewal-${process.pid}-`))
      await service
        .delete(ManifestWorkResource, { name: w.metadata.name, namespace: CONSUMER })
        .catch(() => undefined);
  await broker?.stop();
  await scratch?.remove();
});

interface MadeWork {
  work: ManifestWork;
  data: Record<string, string>;
}

/**
 * Works made before the agent starts and then one after another, every third one changed after
 * it is made, until ten have been made after the agent switched to its new certificate. Counts
 * those made while the agent was between its connections.
 */
async function worksAcrossTheSwitch(): Promise<{ works: MadeWork[]; madeInGap: number }> {
  const works: MadeWork[] = [];
  const make = async (): Promise<MadeWork> => {
    const i = works.length;
    const made = {
      work: await createWork([configMapManifest(target, `cm-${i}`, { n: String(i) })]),
      data: { n: String(i) },
    };
    works.push(made);
    if (works.length % 3 === 0) {
      made.data = { n: `${i}-changed` };
      await service.mergePatch(
        ManifestWorkResource,
        { name: made.work.metadata.name ?? "", namespace: CONSUMER },
        { spec: { workload: { manifests: [configMapManifest(target, `cm-${i}`, made.data)] } } },
      );
    }
    return made;
  };
  for (let i = 0; i < 5; i++) await make();
  firstAgent = await startAgent({ withFiles: true });
  const switched = (): boolean =>
    firstAgent.agent.certificates?.summary?.serialNumber !== serialOf(oldCertificate);
  let madeAfterSwitch = 0;
  let connectedOnce = false;
  let madeInGap = 0;
  while (madeAfterSwitch < 10) {
    const state = firstAgent.agent.connection.state;
    connectedOnce ||= state === "connected";
    if (connectedOnce && state !== "connected") madeInGap++;
    await make();
    if (switched()) madeAfterSwitch++;
    expect(works.length, "the agent switched within 300 works").toBeLessThan(300);
  }
  return { works, madeInGap };
}

describe("agent broker certificate renewal", () => {
  it("renews before expiry while works flow, and loses no work or status", async () => {
    const renewedBefore = await counterValue("maestro_agent_broker_certificate_renewals_total", {
      consumer: CONSUMER,
      result: "renewed",
    });
    const { works, madeInGap } = await worksAcrossTheSwitch();
    // Works were made while the agent was between its connections (3 to 5 of about 25 here),
    // which the broker could not deliver: the resync after the subscribe must bring them.
    expect(madeInGap, "works made while the agent reconnected").toBeGreaterThan(0);
    await eventually(
      "every work applied and reported at its current generation",
      async () => {
        for (const { work } of works) if (!(await settled(work))) return false;
        return true;
      },
      60_000,
    );
    for (const [i, { data }] of works.entries()) {
      const cm = await mgmt.get<KubeObject & { data?: Record<string, string> }>(
        configMapType,
        `cm-${i}`,
        target,
      );
      expect(cm.data, `cm-${i}`).toEqual(data);
    }

    // One renewal: the Secret holds a new certificate for the agent's key, issued by the broker's
    // CA for an hour, which the agent uses and its heartbeat reports to maestro-server.
    const stored = await storedCertificate();
    const ca = new X509Certificate(await readFile(broker.caPath, "utf8"));
    expect(stored.cert.serialNumber).not.toBe(oldCertificate.serialNumber);
    expect(stored.cert.subject).toBe(`CN=${CONSUMER}`);
    expect(stored.cert.checkIssued(ca) && stored.cert.verify(ca.publicKey)).toBe(true);
    expect(stored.cert.publicKey.equals(createPublicKey(createPrivateKey(stored.keyPem)))).toBe(true);
    expect(Date.parse(stored.cert.validTo)).toBeGreaterThan(Date.now() + 0.9 * HOUR);
    expect(firstAgent.agent.certificates?.summary?.serialNumber).toBe(serialOf(stored.cert));
    await eventually(
      "maestro-server heard the new certificate in a heartbeat",
      () => server.agents.snapshot(CONSUMER).agent?.brokerCertificate?.serialNumber === serialOf(stored.cert),
    );
    expect(
      (await counterValue("maestro_agent_broker_certificate_renewals_total", {
        consumer: CONSUMER,
        result: "renewed",
      })) - renewedBefore,
    ).toBe(1);
  }, 120_000);

  it("connects with the renewed certificate alone once the old one has expired", async () => {
    firstAgent.stop.abort();
    await eventually(
      "the old certificate expired",
      () => Date.now() > Date.parse(oldCertificate.validTo) + 1000,
      90_000,
    );
    const { agent } = await startAgent({ withFiles: false });
    await eventually("the new agent connected", () => agent.connection.isConnected(), 30_000);
    const work = await createWork([configMapManifest(target, "cm-after-expiry", { after: "expiry" })]);
    await eventually("the work applied and reported", () => settled(work), 30_000);
    expect(agent.certificates?.summary?.serialNumber).toBe(serialOf((await storedCertificate()).cert));
  }, 120_000);
});

function serialOf(cert: X509Certificate): string {
  return certificateSummary(cert.toString()).serialNumber;
}
