/**
 * maestro-server and maestro-agent end to end: ManifestWorks on the real service apiserver, a real
 * mosquitto (TLS, ACLs) of this test's own so it can be restarted, and two management clusters.
 * Every assertion waits for the level state (objects on the cluster, ManifestWork status), never
 * for a particular message.
 */
import { KubeConfig } from "@kubernetes/client-node";
import mqtt from "mqtt";
import { readFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBroker, type Broker } from "../../hack/harness/broker.ts";
import { freePort } from "../../hack/harness/ports.ts";
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  ManifestWorkResource,
  type Manifest,
  type ManifestWork,
} from "../../operators/api/work/v1.ts";
import { encodeSpecEvent, encodeStatusEvent } from "../../operators/cloudevents/codec/manifestbundle.ts";
import { SnowflakeGenerator } from "../../operators/cloudevents/codec/snowflake.ts";
import { toBinaryMessage } from "../../operators/cloudevents/transport/mqtt.ts";
import { Action, SOURCE_ID, topics, type CloudEvent } from "../../operators/cloudevents/types.ts";
import { AppliedManifestWorkResource } from "../../operators/maestro-agent/appliedwork.ts";
import { MaestroAgent } from "../../operators/maestro-agent/controller.ts";
import { MaestroServer } from "../../operators/maestro-server/controller.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { createLogger, type Logger } from "../../operators/runtime/logger.ts";
import { isNotFound } from "../../operators/runtime/errors.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
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

let broker: Broker;
let service: KubeClient;
const mgmt: Record<string, KubeClient> = {};
/** One per maestro-server started: a restarted server starts with informers of its own. */
const registries: ClusterRegistry[] = [];
const stops: AbortController[] = [];
let server: MaestroServer;
let serverStop: AbortController;
const agents: Record<string, { agent: MaestroAgent; stop: AbortController }> = {};
let target = ""; // a namespace on the management clusters for applied objects
let cleanup: () => Promise<void> = async () => {};

async function credentials(identity: string) {
  const c = await broker.credentials(identity);
  return { caFile: c.caPath, certFile: c.certPath, keyFile: c.keyPath };
}

/** An agent for `consumer`, applying to its own management cluster unless `on` names another. */
async function startAgent(consumer: string, opts: { on?: string; log?: Logger } = {}): Promise<MaestroAgent> {
  const stop = new AbortController();
  const agent = new MaestroAgent({
    consumer,
    kube: mgmt[opts.on ?? consumer]!,
    broker: { url: broker.url, ...(await credentials(consumer)), backoff: fastBackoff },
    statusSyncMs: 300,
    ...(opts.log && { log: opts.log }),
  });
  void agent.start(stop.signal);
  agents[consumer] = { agent, stop };
  return agent;
}

async function startServer(stop: AbortController): Promise<MaestroServer> {
  const clusters = new ClusterRegistry();
  registries.push(clusters);
  const started = new MaestroServer({
    cluster: clusters.add("service", kubeConfigFor("service")),
    broker: {
      url: broker.url,
      ...(await credentials("maestro")),
      clientId: "maestro-test",
      backoff: fastBackoff,
    },
  });
  void started.start(stop.signal);
  return started;
}

let workCounter = 0;
async function createWork(
  consumer: string,
  manifests: Manifest[],
  extra: Partial<ManifestWork["spec"]> = {},
) {
  const name = `work-${Date.now().toString(36)}-${workCounter++}`;
  return service.create<ManifestWork>(ManifestWorkResource, {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: { name, namespace: consumer },
    spec: { workload: { manifests }, ...extra },
  });
}

async function getWork(w: ManifestWork): Promise<ManifestWork | undefined> {
  try {
    return await service.get<ManifestWork>(ManifestWorkResource, w.metadata.name!, w.metadata.namespace);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function getObject(
  client: KubeClient,
  type: ResourceType,
  name: string,
): Promise<KubeObject | undefined> {
  try {
    return await client.get(type, name, target);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function condition(w: ManifestWork | undefined, type: string) {
  return w?.status?.conditions?.find((c) => c.type === type);
}

/** True once the agent reported Applied and Available for the work's current generation. */
async function settled(w: ManifestWork): Promise<boolean> {
  const now = await getWork(w);
  const gen = now?.metadata.generation;
  const applied = condition(now, "Applied");
  return (
    applied?.status === "True" &&
    applied.observedGeneration === gen &&
    condition(now, "Available")?.status === "True"
  );
}

/** Publishes `event` straight onto the broker as `identity` (whose ACL then applies). */
async function publishRaw(identity: string, topic: string, event: CloudEvent): Promise<void> {
  const creds = await broker.credentials(identity);
  const raw = await mqtt.connectAsync(broker.url, {
    protocolVersion: 5,
    clientId: `raw-${identity}-${workCounter++}`,
    ca: readFileSync(creds.caPath),
    cert: readFileSync(creds.certPath),
    key: readFileSync(creds.keyPath),
    reconnectPeriod: 0,
  });
  const { payload, options } = toBinaryMessage(event);
  await raw.publishAsync(topic, payload, options);
  await raw.endAsync();
}

async function counterValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
}

beforeAll(async () => {
  const scratch = await scratchDir("maestro");
  broker = await startBroker({ workDir: scratch.path });
  service = clientFor("service");
  for (const name of ["mgmt-1", "mgmt-2"]) {
    mgmt[name] = clientFor(name);
    await ensureNamespace(service, name);
  }
  target = `applied-${process.pid}-${Date.now().toString(36)}`;
  for (const c of Object.values(mgmt)) await ensureNamespace(c, target);
  serverStop = new AbortController();
  stops.push(serverStop);
  server = await startServer(serverStop);
  await startAgent("mgmt-1");
  await startAgent("mgmt-2");
  await eventually("server and agents connected", () =>
    [server.connection, ...Object.values(agents).map((a) => a.agent.connection)].every((c) =>
      c.isConnected(),
    ),
  );
  cleanup = async () => {
    for (const s of stops) s.abort();
    for (const a of Object.values(agents)) a.stop.abort();
    for (const r of registries) r.stopAll();
    await broker.stop();
    await scratch.remove();
  };
}, 60_000);

afterAll(async () => {
  await cleanup();
});

describe("maestro transport", () => {
  it("applies a work on its consumer's cluster and brings status and feedback back", async () => {
    const work = await createWork(
      "mgmt-1",
      [configMapManifest(target, "cm-create", { a: "1" }), deploymentManifest(target, "app")],
      {
        manifestConfigs: [
          {
            resourceIdentifier: { group: "apps", resource: "deployments", name: "app", namespace: target },
            feedbackRules: [
              { type: "WellKnownStatus" },
              {
                type: "JSONPaths",
                jsonPaths: [
                  { name: "available", path: '.status.conditions[?(@.type=="Available")].status' },
                  { name: "conditions", path: ".status.conditions" },
                ],
              },
            ],
          },
        ],
      },
    );
    await eventually("the work applied and reported", () => settled(work), 30_000);
    expect((await getObject(mgmt["mgmt-1"]!, configMapType, "cm-create"))?.["data"]).toEqual({ a: "1" });
    expect(await getObject(mgmt["mgmt-2"]!, configMapType, "cm-create")).toBeUndefined();
    const reported = (await getWork(work))!;
    expect(reported.metadata.finalizers).toContain(MANIFEST_WORK_CLEANUP_FINALIZER);
    expect(condition(reported, "Published")).toMatchObject({ status: "True", reason: "Published" });
    const manifests = reported.status?.resourceStatus?.manifests ?? [];
    expect(
      manifests.map((m) => [m.resourceMeta.ordinal, m.resourceMeta.kind, m.resourceMeta.resource]),
    ).toEqual([
      [0, "ConfigMap", "configmaps"],
      [1, "Deployment", "deployments"],
    ]);

    // No controller-manager runs here, so this test plays the deployment controller.
    const deploymentStatus = {
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 1,
      conditions: [{ type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "ok" }],
    };
    await mgmt["mgmt-1"]!.mergePatch(
      deploymentType,
      { name: "app", namespace: target },
      { status: deploymentStatus },
      "status",
    );
    await eventually(
      "feedback values reported",
      async () => {
        const values =
          (await getWork(work))?.status?.resourceStatus?.manifests?.[1]?.statusFeedback?.values ?? [];
        return values.some((v) => v.name === "ReadyReplicas");
      },
      30_000,
    );
    const values = (await getWork(work))!.status!.resourceStatus!.manifests![1]!.statusFeedback!.values!;
    const byName = Object.fromEntries(values.map((v) => [v.name, v.fieldValue]));
    expect(byName["ReadyReplicas"]).toEqual({ type: "Integer", integer: 2 });
    expect(byName["Replicas"]).toEqual({ type: "Integer", integer: 2 });
    expect(byName["AvailableReplicas"]).toEqual({ type: "Integer", integer: 1 });
    expect(byName["available"]).toEqual({ type: "String", string: "True" });
    expect(byName["conditions"]?.type).toBe("JsonRaw");
    expect(JSON.parse((byName["conditions"] as { jsonRaw: string }).jsonRaw)).toMatchObject(
      deploymentStatus.conditions,
    );
  });

  it("applies a new version and deletes a manifest the work no longer holds", async () => {
    const work = await createWork("mgmt-1", [
      configMapManifest(target, "cm-keep", { v: "1" }),
      configMapManifest(target, "cm-drop", { v: "1" }),
    ]);
    await eventually("first version applied", () => settled(work), 30_000);
    const current = (await getWork(work))!;
    await service.replace(ManifestWorkResource, {
      ...current,
      spec: { workload: { manifests: [configMapManifest(target, "cm-keep", { v: "2" })] } },
    });
    await eventually(
      "second version applied and the dropped manifest deleted",
      async () =>
        (await getObject(mgmt["mgmt-1"]!, configMapType, "cm-keep"))?.["data"]?.["v" as never] === "2" &&
        (await getObject(mgmt["mgmt-1"]!, configMapType, "cm-drop")) === undefined,
      30_000,
    );
    await eventually("status of generation 2", () => settled(work), 30_000);
    expect((await getWork(work))?.metadata.generation).toBe(2);
  });

  it("deletes a work: the agent removes its objects and confirms, the finalizer is released", async () => {
    const work = await createWork("mgmt-2", [configMapManifest(target, "cm-delete", { a: "1" })]);
    await eventually("applied", () => settled(work), 30_000);
    const appliedBefore = await mgmt["mgmt-2"]!.listAll(AppliedManifestWorkResource);
    expect(
      appliedBefore.items.some(
        (a) => (a["spec"] as { manifestWorkName?: string }).manifestWorkName === work.metadata.uid,
      ),
    ).toBe(true);
    await service.delete(ManifestWorkResource, { name: work.metadata.name!, namespace: "mgmt-2" });
    await eventually(
      "work gone from the service cluster",
      async () => (await getWork(work)) === undefined,
      30_000,
    );
    expect(await getObject(mgmt["mgmt-2"]!, configMapType, "cm-delete")).toBeUndefined();
    const appliedAfter = await mgmt["mgmt-2"]!.listAll(AppliedManifestWorkResource);
    expect(
      appliedAfter.items.some(
        (a) => (a["spec"] as { manifestWorkName?: string }).manifestWorkName === work.metadata.uid,
      ),
    ).toBe(false);
  });

  it("keeps orphaned objects when the deleteOption says Orphan", async () => {
    const work = await createWork("mgmt-2", [configMapManifest(target, "cm-orphan", { a: "1" })], {
      deleteOption: { propagationPolicy: "Orphan" },
    });
    await eventually("applied", () => settled(work), 30_000);
    await service.delete(ManifestWorkResource, { name: work.metadata.name!, namespace: "mgmt-2" });
    await eventually("work gone", async () => (await getWork(work)) === undefined, 30_000);
    expect(await getObject(mgmt["mgmt-2"]!, configMapType, "cm-orphan")).toBeDefined();
  });

  it("keeps an object another work also applies when one of them goes, and deletes it with the last", async () => {
    // As OCM's agent keeps a shared resource: the same object in the works of two hub objects
    // (the same work written again under a new resource ID after a restore) outlives the first.
    const first = await createWork("mgmt-2", [configMapManifest(target, "cm-shared", { by: "both" })]);
    const second = await createWork("mgmt-2", [
      configMapManifest(target, "cm-shared", { by: "both" }),
      configMapManifest(target, "cm-second-only", { by: "second" }),
    ]);
    await eventually(
      "both works applied",
      async () => (await settled(first)) && (await settled(second)),
      30_000,
    );
    await service.delete(ManifestWorkResource, { name: first.metadata.name!, namespace: "mgmt-2" });
    await eventually("the first work gone", async () => (await getWork(first)) === undefined, 30_000);
    expect(await getObject(mgmt["mgmt-2"]!, configMapType, "cm-shared")).toBeDefined();
    // Dropped from the second work while nothing else holds it: deleted.
    const current = (await getWork(second))!;
    await service.mergePatch(
      ManifestWorkResource,
      { name: current.metadata.name!, namespace: "mgmt-2" },
      { spec: { workload: { manifests: [configMapManifest(target, "cm-shared", { by: "both" })] } } },
    );
    await eventually(
      "a manifest dropped by its only holder deleted",
      async () => (await getObject(mgmt["mgmt-2"]!, configMapType, "cm-second-only")) === undefined,
      30_000,
    );
    await service.delete(ManifestWorkResource, { name: second.metadata.name!, namespace: "mgmt-2" });
    await eventually("the second work gone", async () => (await getWork(second)) === undefined, 30_000);
    expect(await getObject(mgmt["mgmt-2"]!, configMapType, "cm-shared")).toBeUndefined();
  });

  it("refuses to publish a bundle over 500 KiB and says so on the work", async () => {
    const big = "x".repeat(520 * 1024);
    const work = await createWork("mgmt-1", [configMapManifest(target, "cm-big", { big })]);
    await eventually(
      "Published=False",
      async () => condition(await getWork(work), "Published")?.reason === "BundleTooLarge",
      30_000,
    );
    const published = condition(await getWork(work), "Published")!;
    expect(published.status).toBe("False");
    expect(published.message).toMatch(/over the 512000-byte limit/);
    expect(await getObject(mgmt["mgmt-1"]!, configMapType, "cm-big")).toBeUndefined();
    await service.delete(ManifestWorkResource, { name: work.metadata.name!, namespace: "mgmt-1" });
  });

  it("deletes a work patched over the bundle limit: the deletion fits a packet, the agent removes its objects", async () => {
    const work = await createWork("mgmt-1", [configMapManifest(target, "cm-grown", { v: "1" })]);
    await eventually("applied", () => settled(work), 30_000);
    const current = (await getWork(work))!;
    const big = "x".repeat(520 * 1024);
    await service.replace(ManifestWorkResource, {
      ...current,
      spec: { workload: { manifests: [configMapManifest(target, "cm-grown", { big })] } },
    });
    await eventually(
      "Published=False",
      async () => condition(await getWork(work), "Published")?.reason === "BundleTooLarge",
      30_000,
    );
    await service.delete(ManifestWorkResource, { name: work.metadata.name!, namespace: "mgmt-1" });
    await eventually(
      "work gone and its object removed",
      async () =>
        (await getWork(work)) === undefined &&
        (await getObject(mgmt["mgmt-1"]!, configMapType, "cm-grown")) === undefined,
      30_000,
    );
  });

  it("refuses kinds outside the agent's allow-list with a clear condition", async () => {
    const role = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "r", namespace: target },
      rules: [],
    };
    const work = await createWork("mgmt-1", [role]);
    await eventually(
      "Applied=False",
      async () => condition(await getWork(work), "Applied")?.status === "False",
      30_000,
    );
    const reported = (await getWork(work))!;
    expect(condition(reported, "Degraded")).toMatchObject({
      status: "True",
      reason: "ManifestKindNotAllowed",
    });
    const manifest = reported.status?.resourceStatus?.manifests?.[0];
    expect(manifest?.conditions.find((c) => c.type === "Applied")).toMatchObject({
      status: "False",
      reason: "ManifestKindNotAllowed",
    });
    expect(manifest?.conditions.find((c) => c.type === "Applied")?.message).toMatch(
      /Role.rbac.authorization.k8s.io is not in this agent's allow-list/,
    );
  });

  it("drops a spec event older than what the agent holds", async () => {
    const work = await createWork("mgmt-1", [configMapManifest(target, "cm-stale", { v: "1" })]);
    await eventually("applied", () => settled(work), 30_000);
    const v1 = (await getWork(work))!;
    await service.replace(ManifestWorkResource, {
      ...v1,
      spec: { workload: { manifests: [configMapManifest(target, "cm-stale", { v: "2" })] } },
    });
    await eventually("generation 2 applied", () => settled(work), 30_000);
    const droppedBefore = await counterValue("maestro_cloudevents_dropped_total", {
      client: "maestro-agent-mgmt-1",
      reason: "stale-version",
    });

    // Replay generation 1 as the source would have sent it, straight onto the broker.
    const creds = await broker.credentials("maestro");
    const raw = await mqtt.connectAsync(broker.url, {
      protocolVersion: 5,
      clientId: "stale-replayer",
      ca: readFileSync(creds.caPath),
      cert: readFileSync(creds.certPath),
      key: readFileSync(creds.keyPath),
      reconnectPeriod: 0,
    });
    const { payload, options } = toBinaryMessage(encodeSpecEvent(v1, Action.update));
    await raw.publishAsync(topics.sourceEvents("mgmt-1"), payload, options);
    await raw.endAsync();
    await eventually(
      "the stale event counted as dropped",
      async () =>
        (await counterValue("maestro_cloudevents_dropped_total", {
          client: "maestro-agent-mgmt-1",
          reason: "stale-version",
        })) > droppedBefore,
    );
    expect((await getObject(mgmt["mgmt-1"]!, configMapType, "cm-stale"))?.["data"]).toEqual({ v: "2" });
  });

  it("refuses a Deleted for a work that is not being deleted: the work's later statuses still reach it", async () => {
    const work = await createWork("mgmt-1", [deploymentManifest(target, "app-forged")], {
      manifestConfigs: [
        {
          resourceIdentifier: {
            group: "apps",
            resource: "deployments",
            name: "app-forged",
            namespace: target,
          },
          feedbackRules: [{ type: "WellKnownStatus" }],
        },
      ],
    });
    await eventually("applied", () => settled(work), 30_000);
    const refused = () =>
      counterValue("maestro_cloudevents_dropped_total", {
        client: "maestro-server",
        reason: "delete-not-requested",
      });
    const refusedBefore = await refused();

    // What the agent sends when it has deleted a work, sent by mgmt-1 (the broker allows it to
    // speak only for itself) for its own live work, with a sequence ID newer than any it sent.
    const uid = work.metadata.uid!;
    const shown = (await getWork(work))!;
    const deleted = {
      type: "Deleted",
      status: "True" as const,
      reason: "ManifestsDeleted",
      message: "The manifests are deleted from the cluster mgmt-1",
      lastTransitionTime: new Date().toISOString().slice(0, 19) + "Z",
    };
    const forged = encodeStatusEvent(
      {
        uid,
        generation: shown.metadata.generation ?? 1,
        consumer: "mgmt-1",
        originalSource: SOURCE_ID,
        metadata: { name: uid, namespace: "mgmt-1" },
      },
      { conditions: [deleted] },
      {
        agentId: "mgmt-1-work-agent",
        sequenceId: new SnowflakeGenerator(1, () => Date.now() + 60_000).next(),
        statusHash: "forged",
        action: Action.update,
      },
    );
    await publishRaw("mgmt-1", topics.agentEvents("mgmt-1"), forged);
    await eventually("the forged Deleted refused", async () => (await refused()) > refusedBefore);
    const after = (await getWork(work))!;
    expect(condition(after, "Deleted")).toBeUndefined();
    expect(after.metadata.finalizers).toContain(MANIFEST_WORK_CLEANUP_FINALIZER);
    expect(await settled(work)).toBe(true);

    // A change on the management cluster (this test plays the deployment controller) is reported.
    await mgmt["mgmt-1"]!.mergePatch(
      deploymentType,
      { name: "app-forged", namespace: target },
      { status: { replicas: 2, readyReplicas: 2, availableReplicas: 2 } },
      "status",
    );
    await eventually(
      "the change reported on the work",
      async () => {
        const values =
          (await getWork(work))?.status?.resourceStatus?.manifests?.[0]?.statusFeedback?.values ?? [];
        return values.some(
          (v) => v.name === "ReadyReplicas" && v.fieldValue.type === "Integer" && v.fieldValue.integer === 2,
        );
      },
      30_000,
    );
    expect(condition(await getWork(work), "Deleted")).toBeUndefined();
    await service.delete(ManifestWorkResource, { name: work.metadata.name!, namespace: "mgmt-1" });
    await eventually("the work deleted", async () => (await getWork(work)) === undefined, 30_000);
  });

  it("converges after an agent restart: missed updates, deletes and creates arrive, nothing is duplicated", async () => {
    const updated = await createWork("mgmt-2", [configMapManifest(target, "cm-r-upd", { v: "1" })]);
    const deleted = await createWork("mgmt-2", [configMapManifest(target, "cm-r-del", { v: "1" })]);
    await eventually(
      "both applied",
      async () => (await settled(updated)) && (await settled(deleted)),
      30_000,
    );

    agents["mgmt-2"]!.stop.abort();
    await eventually("agent disconnected", () => !agents["mgmt-2"]!.agent.connection.isConnected());
    const current = (await getWork(updated))!;
    await service.replace(ManifestWorkResource, {
      ...current,
      spec: { workload: { manifests: [configMapManifest(target, "cm-r-upd", { v: "2" })] } },
    });
    await service.delete(ManifestWorkResource, { name: deleted.metadata.name!, namespace: "mgmt-2" });
    const created = await createWork("mgmt-2", [configMapManifest(target, "cm-r-new", { v: "1" })]);

    await startAgent("mgmt-2");
    await eventually(
      "everything converged",
      async () =>
        (await settled(updated)) &&
        (await settled(created)) &&
        (await getWork(deleted)) === undefined &&
        (await getObject(mgmt["mgmt-2"]!, configMapType, "cm-r-del")) === undefined,
      45_000,
    );
    expect((await getObject(mgmt["mgmt-2"]!, configMapType, "cm-r-upd"))?.["data"]).toEqual({ v: "2" });
    const names = (await mgmt["mgmt-2"]!.listAll(configMapType, { namespace: target })).items.map(
      (c) => c.metadata.name,
    );
    expect(names.filter((n) => n?.startsWith("cm-r-")).sort()).toEqual(["cm-r-new", "cm-r-upd"]);
  });

  it("applies a work that failed while its management cluster's apiserver was away within the retry bound once it answers", async () => {
    // The agent of consumer mgmt-gated reaches mgmt-1's apiserver through a port that refuses
    // connections until the test opens it: an apiserver away, then back.
    const port = await freePort();
    const real = new URL(kubeConfigFor("mgmt-1").getCurrentCluster()!.server);
    const through = new KubeConfig();
    const admin = kubeConfigFor("mgmt-1");
    through.loadFromOptions({
      clusters: admin.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${port}` })),
      users: admin.users,
      contexts: admin.contexts,
      currentContext: admin.currentContext,
    });
    await ensureNamespace(service, "mgmt-gated");
    const stop = new AbortController();
    const gated = new MaestroAgent({
      consumer: "mgmt-gated",
      kube: new KubeClient("mgmt-gated", through),
      broker: { url: broker.url, ...(await credentials("mgmt-gated")), backoff: fastBackoff },
      statusSyncMs: 300,
      maxRetryBackoffMs: 1_000,
    });
    void gated.start(stop.signal);
    let gate: Server | undefined;
    try {
      await eventually("the gated agent connected", () => gated.connection.isConnected());
      const work = await createWork("mgmt-gated", [configMapManifest(target, "cm-gated", { v: "1" })]);
      // Evidence of a long outage for this work: at controllers' default backoff (doubling from
      // 5 ms), its 12th failure is followed by a wait of 20 s.
      const failures = (): Promise<number> =>
        counterValue("controller_runtime_reconcile_errors_total", { controller: "maestro-agent-mgmt-gated" });
      await eventually("the work failed 12 times", async () => (await failures()) >= 12, 60_000);
      gate = createServer((down) => {
        const up = connect(Number(real.port), real.hostname);
        down.on("error", () => up.destroy());
        up.on("error", () => down.destroy());
        down.pipe(up).pipe(down);
      });
      await new Promise<void>((resolve) => gate!.listen(port, "127.0.0.1", resolve));
      await eventually("applied once the apiserver answers", () => settled(work), 8_000);
      expect((await getObject(mgmt["mgmt-1"]!, configMapType, "cm-gated"))?.["data"]).toEqual({ v: "1" });
      await service.delete(ManifestWorkResource, { name: work.metadata.name!, namespace: "mgmt-gated" });
      await eventually("deleted", async () => (await getWork(work)) === undefined, 30_000);
    } finally {
      stop.abort();
      gate?.close();
    }
  });

  it("converges after a broker restart: work created while it was down is delivered and reported", async () => {
    const before = await createWork("mgmt-1", [configMapManifest(target, "cm-b-1", { v: "1" })]);
    await eventually("applied", () => settled(before), 30_000);
    const connects = await counterValue("maestro_mqtt_connects_total", { client: "maestro-server" });

    await broker.stop();
    await eventually("everyone disconnected", () =>
      [server.connection, ...Object.values(agents).map((a) => a.agent.connection)].every(
        (c) => !c.isConnected(),
      ),
    );
    const during = await createWork("mgmt-1", [configMapManifest(target, "cm-b-2", { v: "1" })]);
    await eventually(
      "Published=Unknown while the broker is down",
      async () => condition(await getWork(during), "Published")?.status === "Unknown",
    );
    await broker.restart();

    await eventually("delivered after the broker is back", () => settled(during), 45_000);
    expect(await counterValue("maestro_mqtt_connects_total", { client: "maestro-server" })).toBeGreaterThan(
      connects,
    );
    expect(condition(await getWork(during), "Published")?.status).toBe("True");
    expect((await getObject(mgmt["mgmt-1"]!, configMapType, "cm-b-2"))?.["data"]).toEqual({ v: "1" });
    expect(await settled(before)).toBe(true);
  });

  /** An agent for `consumer` on mgmt-1, whose resync answers are recorded from its log. */
  async function seedAgent(consumer: string) {
    const answers: Array<{ asked: number; sent: number; missing: number }> = [];
    const log = createLogger({}, "info", (line) => {
      const entry = JSON.parse(line) as { msg?: string; asked?: number; sent?: number; missing?: number };
      if (entry.msg === "Answered status resync")
        answers.push({ asked: entry.asked ?? 0, sent: entry.sent ?? 0, missing: entry.missing ?? 0 });
    });
    const agent = await startAgent(consumer, { on: "mgmt-1", log });
    await eventually("the agent connected", () => agent.connection.isConnected());
    return { agent, stop: agents[consumer]!.stop, answers };
  }

  /**
   * Two works of `consumer` applied; the server stopped; while it is away, the second work stops
   * showing the agent's report (Available), and `meanwhile` runs; then a server of its own starts.
   */
  async function restartServerAround(
    consumer: string,
    meanwhile: (first: Awaited<ReturnType<typeof seedAgent>>) => Promise<void>,
  ) {
    await ensureNamespace(service, consumer);
    const first = await seedAgent(consumer);
    const unchanged = await createWork(consumer, [configMapManifest(target, `${consumer}-1`, { v: "1" })]);
    const changed = await createWork(consumer, [configMapManifest(target, `${consumer}-2`, { v: "1" })]);
    await eventually(
      "both applied",
      async () => (await settled(unchanged)) && (await settled(changed)),
      30_000,
    );

    serverStop.abort();
    await eventually("the server disconnected", () => !server.connection.isConnected());
    const shown = (await getWork(changed))!;
    const conditions = shown.status?.conditions?.filter((c) => c.type !== "Available") ?? [];
    await service.replace(
      ManifestWorkResource,
      { ...shown, status: { ...shown.status, conditions } },
      "status",
    );
    first.answers.length = 0;
    await meanwhile(first);

    serverStop = new AbortController();
    stops.push(serverStop);
    server = await startServer(serverStop);
    return { first, unchanged, changed };
  }

  it("after a server restart, agents answer its status resync only for statuses that changed while it was away", async () => {
    const { first, unchanged, changed } = await restartServerAround("mgmt-seed", async () => {});
    await eventually("the agent answered the resync", () => first.answers.some((a) => a.asked === 2), 30_000);
    expect(first.answers.find((a) => a.asked === 2)).toEqual({ asked: 2, sent: 1, missing: 0 });
    await eventually("the changed work shows the agent's report again", () => settled(changed), 30_000);
    expect(await settled(unchanged)).toBe(true);
  });

  it("an agent restarted while the server was away gets its works again once the server is back", async () => {
    let second: Awaited<ReturnType<typeof seedAgent>> | undefined;
    const { unchanged, changed } = await restartServerAround("mgmt-seed-2", async (first) => {
      // The new agent's spec resync goes out while no server listens, and is lost.
      first.stop.abort();
      await eventually("the first agent disconnected", () => !first.agent.connection.isConnected());
      second = await seedAgent("mgmt-seed-2");
    });
    await eventually(
      "the agent answered the resync",
      () => second!.answers.some((a) => a.asked === 2),
      30_000,
    );
    expect(second!.answers.find((a) => a.asked === 2)).toEqual({ asked: 2, sent: 0, missing: 2 });
    await eventually(
      "the agent holds both works again and the changed one shows its report",
      async () =>
        second!.agent.store.get(unchanged.metadata.uid!) !== undefined &&
        second!.agent.store.get(changed.metadata.uid!) !== undefined &&
        (await settled(changed)),
      30_000,
    );
  });
});
