/**
 * The transport never deletes what it does not know it deleted (issue 34, decision 0012), end to
 * end: the real service apiserver, a mosquitto of this test's own, maestro-server and an agent
 * applying to mgmt-1. A region whose service cluster lost its works (restored from a backup, which
 * holds none) leaves what the agent holds alone and shows it as unclaimed; works written again
 * under the same names take the objects over without re-creating them, and without a single write
 * to them when the agent still holds the older copies and nothing changed; a deletion
 * maestro-server gave up waiting for is still carried out when the agent comes back, across an
 * operators restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBroker, type Broker } from "../../hack/harness/broker.ts";
import { ConfigMapResource } from "../../operators/api/core.ts";
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  ManifestWorkResource,
  type Manifest,
  type ManifestWork,
} from "../../operators/api/work/v1.ts";
import { ADOPTED_METRIC } from "../../operators/maestro-agent/adopt.ts";
import {
  AppliedManifestWorkResource,
  type AppliedManifestWork,
} from "../../operators/maestro-agent/appliedwork.ts";
import { MaestroAgent } from "../../operators/maestro-agent/controller.ts";
import { MaestroServer } from "../../operators/maestro-server/controller.ts";
import { DELETED_WORKS_CONFIGMAP } from "../../operators/maestro-server/deleted-works.ts";
import { UNCLAIMED_METRIC } from "../../operators/maestro-server/unclaimed.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { createLogger, type LogValues } from "../../operators/runtime/logger.ts";
import { metricsRegistry } from "../../operators/runtime/metrics.ts";
import { clientFor, configMapType, eventually, scratchDir } from "../support/fixtures.ts";
import { configMapManifest, deploymentManifest, ensureNamespace } from "../support/manifests.ts";
import { kubeConfigFor } from "../support/region.ts";

const deploymentType: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};
const fastBackoff = { initialMs: 100, maxMs: 1000 };
const suffix = `${process.pid}-${Date.now().toString(36)}`;

let broker: Broker;
let service: KubeClient;
let mgmt: KubeClient;
let target = "";
const stops: AbortController[] = [];
const registries: ClusterRegistry[] = [];
let cleanup: () => Promise<void> = async () => {};

/** A running maestro-server and what it logged of its spec resync answers. */
interface RunningServer {
  server: MaestroServer;
  stop: AbortController;
  answers: LogValues[];
}

async function credentials(identity: string) {
  const c = await broker.credentials(identity);
  return { caFile: c.caPath, certFile: c.certPath, keyFile: c.keyPath };
}

async function startServer(staleDeleteMs?: number): Promise<RunningServer> {
  const stop = new AbortController();
  stops.push(stop);
  const clusters = new ClusterRegistry();
  registries.push(clusters);
  const answers: LogValues[] = [];
  const log = createLogger({}, "info", (line) => {
    const entry = JSON.parse(line) as LogValues & { msg?: string };
    if (entry.msg === "Answered spec resync") answers.push(entry);
  });
  const server = new MaestroServer({
    cluster: clusters.add("service", kubeConfigFor("service")),
    broker: {
      url: broker.url,
      ...(await credentials("maestro")),
      clientId: "maestro-adopt",
      backoff: fastBackoff,
    },
    ...(staleDeleteMs === undefined ? {} : { staleDeleteMs }),
    log,
  });
  void server.start(stop.signal);
  await eventually("the server connected", () => server.connection.isConnected());
  return { server, stop, answers };
}

async function stopServer(running: RunningServer): Promise<void> {
  running.stop.abort();
  await eventually("the server disconnected", () => !running.server.connection.isConnected());
}

async function startAgent(
  consumer: string,
  kube: KubeClient = mgmt,
): Promise<{ agent: MaestroAgent; stop: AbortController }> {
  const stop = new AbortController();
  stops.push(stop);
  const agent = new MaestroAgent({
    consumer,
    kube,
    broker: { url: broker.url, ...(await credentials(consumer)), backoff: fastBackoff },
    statusSyncMs: 300,
  });
  void agent.start(stop.signal);
  await eventually("the agent connected", () => agent.connection.isConnected());
  return { agent, stop };
}

async function createWork(consumer: string, name: string, manifests: Manifest[]): Promise<ManifestWork> {
  return service.create<ManifestWork>(ManifestWorkResource, {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: { name, namespace: consumer },
    spec: { workload: { manifests } },
  });
}

const getWork = (w: ManifestWork) =>
  service.find<ManifestWork>(ManifestWorkResource, w.metadata.name!, w.metadata.namespace);
const getConfigMap = (name: string) => mgmt.find(configMapType, name, target);

const WRITES = new Set(["apply", "create", "createIfAbsent", "replace", "mergePatch", "delete"]);

/**
 * The management cluster's client with every write request the agent sends through it listed as
 * "<method> <plural>/<namespace>/<name>"; the apiserver's own request counter would count other
 * test files' writes too.
 */
function countingWrites(client: KubeClient, writes: string[]): KubeClient {
  return new Proxy(client, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        if (typeof prop === "string" && WRITES.has(prop)) {
          const [type, obj] = args as [
            ResourceType,
            Partial<KubeObject> & { name?: string; namespace?: string },
          ];
          const meta = obj.metadata ?? obj;
          writes.push(`${prop} ${type.plural}/${meta.namespace ?? ""}/${meta.name ?? ""}`);
        }
        return method.apply(target, args);
      };
    },
  });
}

/** True once the agent reported Applied for the work's current generation. */
async function settled(w: ManifestWork): Promise<boolean> {
  const now = await getWork(w);
  const applied = now?.status?.conditions?.find((c) => c.type === "Applied");
  return applied?.status === "True" && applied.observedGeneration === now?.metadata.generation;
}

/** The works the agent recorded on mgmt-1 (AppliedManifestWorks), by resource ID. */
async function recordedWorks(): Promise<string[]> {
  const list = await mgmt.listAll<AppliedManifestWork>(AppliedManifestWorkResource);
  return list.items.map((a) => a.spec?.manifestWorkName ?? "");
}

async function unclaimedGauge(consumer: string): Promise<number | undefined> {
  const metric = await metricsRegistry.getSingleMetric(UNCLAIMED_METRIC)?.get();
  return metric?.values.find((v) => v.labels["consumer"] === consumer)?.value;
}

async function adoptedCount(consumer: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(ADOPTED_METRIC)?.get();
  return metric?.values.find((v) => v.labels["consumer"] === consumer)?.value ?? 0;
}

/** The region loses its works: the service cluster comes back without them (a backup holds none). */
async function loseWorks(works: ManifestWork[]): Promise<void> {
  for (const w of works) {
    const ref = { name: w.metadata.name!, namespace: w.metadata.namespace };
    await service.mergePatch(ManifestWorkResource, ref, { metadata: { finalizers: null } });
    await service.delete(ManifestWorkResource, ref);
    await eventually("the work gone", async () => (await getWork(w)) === undefined);
  }
}

beforeAll(async () => {
  const scratch = await scratchDir("maestro-adopt");
  broker = await startBroker({ workDir: scratch.path });
  service = clientFor("service");
  mgmt = clientFor("mgmt-1");
  target = `adopted-${suffix}`;
  await ensureNamespace(mgmt, target);
  cleanup = async () => {
    for (const s of stops) s.abort();
    for (const r of registries) r.stopAll();
    await broker.stop();
    await scratch.remove();
  };
}, 60_000);

afterAll(async () => {
  await cleanup();
});

describe("a restored region adopts what its agents hold", () => {
  it.each([
    { agentRestarted: false, consumer: `adopt-${suffix}` },
    { agentRestarted: true, consumer: `adopt-r-${suffix}` },
  ])(
    "leaves works it does not know, shows them unclaimed, and hands them to works of the same names (agent restarted: $agentRestarted)",
    async ({ agentRestarted, consumer }) => {
      await ensureNamespace(service, consumer);
      const cm = (name: string) => `${consumer}-${name}`;
      let running = await startServer();
      let agent = await startAgent(consumer);
      const hc = await createWork(consumer, "hc", [
        configMapManifest(target, cm("shared"), { v: "1" }),
        configMapManifest(target, cm("old-only"), { v: "1" }),
      ]);
      const np = await createWork(consumer, "np", [configMapManifest(target, cm("np"), { v: "1" })]);
      await eventually("both works applied", async () => (await settled(hc)) && (await settled(np)), 30_000);
      const uidBefore = {
        shared: (await getConfigMap(cm("shared")))!.metadata.uid,
        np: (await getConfigMap(cm("np")))!.metadata.uid,
      };
      const oldIds = [hc.metadata.uid!, np.metadata.uid!].sort();

      // (a) The service cluster comes back without the works; the agent holds them still.
      await stopServer(running);
      await loseWorks([hc, np]);
      if (agentRestarted) {
        agent.stop.abort();
        await eventually("the agent disconnected", () => !agent.agent.connection.isConnected());
        agent = await startAgent(consumer);
      }
      running = await startServer();
      const answered = () => running.answers.find((a) => a["consumer"] === consumer);
      await eventually("the agent's spec resync answered", () => answered() !== undefined, 30_000);
      expect(answered()).toMatchObject({ agentHolds: 2, sent: 0, unclaimed: 2 });
      expect(await unclaimedGauge(consumer)).toBe(2);
      expect(running.server.agents.snapshot(consumer).unclaimedWorks).toEqual({
        count: 2,
        resourceIDs: oldIds,
      });
      expect((await recordedWorks()).filter((id) => oldIds.includes(id)).sort()).toEqual(oldIds);
      for (const name of ["shared", "old-only", "np"]) expect(await getConfigMap(cm(name))).toBeDefined();

      // (b) The controllers write the works again: new uids, the same names.
      const adoptedBefore = await adoptedCount(consumer);
      const hc2 = await createWork(consumer, "hc", [configMapManifest(target, cm("shared"), { v: "1" })]);
      const np2 = await createWork(consumer, "np", [configMapManifest(target, cm("np"), { v: "1" })]);
      expect(hc2.metadata.uid).not.toBe(hc.metadata.uid);
      await eventually(
        "the new works applied",
        async () => (await settled(hc2)) && (await settled(np2)),
        30_000,
      );
      // np's manifests are what its older copy applied: adopted by an agent that still holds that
      // copy. hc dropped one, so it is applied in full; a restarted agent holds no older copy.
      expect(await adoptedCount(consumer)).toBe(adoptedBefore + (agentRestarted ? 0 : 1));
      await eventually(
        "the old works retired and no longer unclaimed",
        async () =>
          (await recordedWorks()).every((id) => !oldIds.includes(id)) &&
          (await unclaimedGauge(consumer)) === 0 &&
          running.server.agents.snapshot(consumer).unclaimedWorks?.count === 0,
        30_000,
      );
      // Taken over, not re-created; what only the old work applied is no longer desired.
      expect((await getConfigMap(cm("shared")))?.metadata.uid).toBe(uidBefore.shared);
      expect((await getConfigMap(cm("np")))?.metadata.uid).toBe(uidBefore.np);
      expect(await getConfigMap(cm("old-only"))).toBeUndefined();
      expect(agent.agent.store.get(hc.metadata.uid!)).toBeUndefined();

      // The new works own the objects: deleting them deletes the objects.
      for (const w of [hc2, np2])
        await service.delete(ManifestWorkResource, { name: w.metadata.name!, namespace: consumer });
      await eventually(
        "the works and their objects gone",
        async () =>
          (await getWork(hc2)) === undefined &&
          (await getWork(np2)) === undefined &&
          (await getConfigMap(cm("shared"))) === undefined &&
          (await getConfigMap(cm("np"))) === undefined,
        30_000,
      );
      agent.stop.abort();
      await stopServer(running);
    },
    120_000,
  );

  it("adopts a work written again with the same manifests: no write to its objects, which keep their uid and resourceVersion", async () => {
    const consumer = `same-${suffix}`;
    await ensureNamespace(service, consumer);
    const writes: string[] = [];
    let running = await startServer();
    const agent = await startAgent(consumer, countingWrites(mgmt, writes));
    const names = { cm: `${consumer}-cm`, deployment: `${consumer}-app` };
    // A ConfigMap (its mark is its resourceVersion) and a Deployment (its generation and metadata).
    const manifests = [
      configMapManifest(target, names.cm, { v: "1" }),
      deploymentManifest(target, names.deployment),
    ];
    const first = await createWork(consumer, "hc", manifests);
    await eventually("applied", () => settled(first), 30_000);
    // Its record: one create carrying the intent and one status write listing the uids, as OCM's agent.
    const records = await mgmt.listAll<AppliedManifestWork>(AppliedManifestWorkResource);
    const record = records.items.find((a) => a.spec?.manifestWorkName === first.metadata.uid);
    const recordWrite = `apply ${AppliedManifestWorkResource.plural}//${record?.metadata.name}`;
    expect(writes.filter((w) => w.includes(AppliedManifestWorkResource.plural))).toEqual([
      recordWrite,
      recordWrite,
    ]);
    expect(record?.status?.appliedResources?.map((r) => [r.name, Boolean(r.uid)])).toEqual([
      [names.cm, true],
      [names.deployment, true],
    ]);
    const identities = async () => {
      const cm = await getConfigMap(names.cm);
      const deployment = await mgmt.find(deploymentType, names.deployment, target);
      return [cm, deployment].map((o) => ({
        uid: o?.metadata.uid,
        resourceVersion: o?.metadata.resourceVersion,
      }));
    };
    const before = await identities();
    expect(before.every((o) => o.uid && o.resourceVersion)).toBe(true);

    // The region loses the work; the agent keeps its copy, applied.
    await stopServer(running);
    await loseWorks([first]);
    running = await startServer();
    const answered = () => running.answers.find((a) => a["consumer"] === consumer);
    await eventually("the agent's spec resync answered", () => answered() !== undefined, 30_000);
    expect(answered()).toMatchObject({ agentHolds: 1, unclaimed: 1 });
    const adoptedBefore = await adoptedCount(consumer);
    const objectWrites = () =>
      writes.filter((w) => !w.includes(AppliedManifestWorkResource.plural) && w.includes(`/${target}/`));
    expect(objectWrites().length).toBeGreaterThan(0); // the first copy's applies, seen by the counter
    writes.length = 0;

    // Written again: a new uid, the same name and manifests.
    const second = await createWork(consumer, "hc", manifests);
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    await eventually(
      "the new work applied and the older copy's record gone",
      async () => (await settled(second)) && !(await recordedWorks()).includes(first.metadata.uid!),
      30_000,
    );
    expect(objectWrites()).toEqual([]);
    expect(await identities()).toEqual(before);
    expect(await adoptedCount(consumer)).toBe(adoptedBefore + 1);
    expect(await recordedWorks()).toContain(second.metadata.uid);
    // The agent's own bookkeeping only: the new record written, the older one deleted.
    expect(writes.every((w) => w.includes(AppliedManifestWorkResource.plural))).toBe(true);
    await eventually(
      "the older copy forgotten",
      () => agent.agent.store.get(first.metadata.uid!) === undefined,
    );
    const applied = (await getWork(second))?.status?.conditions?.find((c) => c.type === "Applied");
    expect(applied).toMatchObject({ status: "True", observedGeneration: second.metadata.generation });

    // The new work owns the objects: its deletion deletes them.
    await service.delete(ManifestWorkResource, { name: "hc", namespace: consumer });
    await eventually(
      "the work and its objects gone",
      async () =>
        (await getWork(second)) === undefined &&
        (await getConfigMap(names.cm)) === undefined &&
        (await mgmt.find(deploymentType, names.deployment, target)) === undefined,
      30_000,
    );
    agent.stop.abort();
    await stopServer(running);
  }, 90_000);

  it("carries out a deletion it gave up waiting for once the agent is back, across an operators restart", async () => {
    const consumer = `tomb-${suffix}`;
    await ensureNamespace(service, consumer);
    let running = await startServer(1500);
    const first = await startAgent(consumer);
    const work = await createWork(consumer, "hc", [configMapManifest(target, `${consumer}-cm`, { v: "1" })]);
    await eventually("applied", () => settled(work), 30_000);
    expect((await getWork(work))?.metadata.finalizers).toContain(MANIFEST_WORK_CLEANUP_FINALIZER);

    first.stop.abort();
    await eventually("the agent disconnected", () => !first.agent.connection.isConnected());
    await service.delete(ManifestWorkResource, { name: "hc", namespace: consumer });
    await eventually(
      "the unconfirmed deletion released",
      async () => (await getWork(work)) === undefined,
      30_000,
    );
    const deletedWorks = async () => {
      const record = await service.find<KubeObject & { data?: Record<string, string> }>(
        ConfigMapResource,
        DELETED_WORKS_CONFIGMAP,
        consumer,
      );
      return Object.keys(JSON.parse(record?.data?.["deleted.json"] ?? "{}") as object);
    };
    expect(await deletedWorks()).toEqual([work.metadata.uid]);
    expect(await getConfigMap(`${consumer}-cm`)).toBeDefined();

    // The operators restart (nothing in memory), then the agent comes back holding the work.
    await stopServer(running);
    running = await startServer();
    const second = await startAgent(consumer);
    await eventually(
      "the deletion carried out and confirmed",
      async () =>
        (await getConfigMap(`${consumer}-cm`)) === undefined &&
        !(await recordedWorks()).includes(work.metadata.uid!) &&
        (await deletedWorks()).length === 0,
      30_000,
    );
    expect(running.answers.find((a) => a["consumer"] === consumer)).toMatchObject({ sent: 1, unclaimed: 0 });
    second.stop.abort();
    await stopServer(running);
  }, 90_000);
});
