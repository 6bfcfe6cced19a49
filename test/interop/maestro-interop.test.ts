/**
 * Interoperability with the real Maestro (Go, built by hack/build-maestro.sh from a pinned
 * commit), through one mosquitto with TLS and per-identity ACLs:
 *   1. our maestro-server publishes ManifestWorks that the real `maestro agent` applies, and its
 *      status lands in the ManifestWork; a delete is confirmed by the real agent;
 *   2. our maestro-agent serves the real `maestro server` (PostgreSQL): a resource bundle created
 *      through Maestro's gRPC API is applied by our agent, its status is visible through Maestro's
 *      REST API, and a delete is confirmed.
 * Run with `npm run test:interop`; kept out of `npm test` because the Maestro build is slow cold.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBroker, type Broker } from "../../hack/harness/broker.ts";
import {
  startMaestroAgent,
  startMaestroServer,
  type MaestroAgent as RealMaestroAgent,
  type MaestroServer as RealMaestroServer,
  type ResourceBundle,
} from "../../hack/harness/maestro/index.ts";
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  ManifestWorkResource,
  type ManifestWork,
} from "../../operators/api/work/v1.ts";
import { MaestroAgent } from "../../operators/maestro-agent/controller.ts";
import { MaestroServer } from "../../operators/maestro-server/controller.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { ResourceType } from "../../operators/runtime/kube.ts";
import { clientFor, configMapType, eventually, scratchDir } from "../support/fixtures.ts";
import { configMapManifest, deploymentManifest, ensureNamespace } from "../support/manifests.ts";
import { clusterInfo, kubeConfigFor } from "../support/region.ts";

const deploymentType: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};
const fastBackoff = { initialMs: 100, maxMs: 1000 };
/** The real agent's status sync runs every 2 s here; a Maestro round trip stays well inside this. */
const ROUND_TRIP_MS = 60_000;

let broker: Broker;
let workDir = "";
let removeWorkDir: () => Promise<void> = async () => {};
const target = `interop-${process.pid}-${Date.now().toString(36)}`;

function mqttFor(identity: string) {
  return broker.credentials(identity).then((c) => ({
    brokerHost: `${broker.host}:${broker.port}`,
    caPath: c.caPath,
    certPath: c.certPath,
    keyPath: c.keyPath,
  }));
}

function conditionOf(conditions: Array<{ type: string; status: string }> | undefined, type: string) {
  return conditions?.find((c) => c.type === type);
}

beforeAll(async () => {
  const scratch = await scratchDir("interop");
  workDir = scratch.path;
  removeWorkDir = () => scratch.remove();
  broker = await startBroker({ workDir });
  for (const name of ["mgmt-1", "mgmt-2"]) {
    await ensureNamespace(clientFor(name), target);
    await ensureNamespace(clientFor("service"), name);
  }
}, 120_000);

afterAll(async () => {
  await broker?.stop();
  await removeWorkDir();
});

describe("our maestro-server with the real maestro agent", () => {
  const consumer = "mgmt-1";
  const service = clientFor("service");
  const managed = clientFor(consumer);
  const registry = new ClusterRegistry();
  const stop = new AbortController();
  let realAgent: RealMaestroAgent | undefined;

  beforeAll(async () => {
    const server = new MaestroServer({
      cluster: registry.add("service", kubeConfigFor("service")),
      broker: {
        url: broker.url,
        ...(await broker.credentials("maestro").then((c) => ({
          caFile: c.caPath,
          certFile: c.certPath,
          keyFile: c.keyPath,
        }))),
        clientId: "maestro-interop",
        backoff: fastBackoff,
      },
    });
    void server.start(stop.signal);
    await eventually("our server connected", () => server.connection.isConnected());
    realAgent = await startMaestroAgent({
      workDir,
      consumer,
      kubeconfigPath: clusterInfo(consumer).kubeconfigPath,
      mqtt: await mqttFor(consumer),
    });
  }, 300_000);

  afterAll(async () => {
    stop.abort();
    registry.stopAll();
    await realAgent?.stop();
  });

  async function work(name: string): Promise<ManifestWork | undefined> {
    return service.find<ManifestWork>(ManifestWorkResource, name, consumer);
  }

  it("applies, reports feedback, updates with garbage collection and confirms a delete", async () => {
    const name = `interop-${Date.now().toString(36)}`;
    await service.create<ManifestWork>(ManifestWorkResource, {
      apiVersion: "work.open-cluster-management.io/v1",
      kind: "ManifestWork",
      metadata: { name, namespace: consumer },
      spec: {
        workload: {
          manifests: [configMapManifest(target, "first", { a: "1" }), deploymentManifest(target, "app", 3)],
        },
        manifestConfigs: [
          {
            resourceIdentifier: { group: "apps", resource: "deployments", name: "app", namespace: target },
            feedbackRules: [
              { type: "WellKnownStatus" },
              { type: "JSONPaths", jsonPaths: [{ name: "desired", path: ".status.replicas" }] },
            ],
          },
        ],
      },
    });
    await eventually(
      "the real agent applied the work and reported Applied",
      async () => {
        const w = await work(name);
        const applied = conditionOf(w?.status?.conditions, "Applied");
        return (
          applied?.status === "True" && (await managed.find(configMapType, "first", target)) !== undefined
        );
      },
      ROUND_TRIP_MS,
    );
    const applied = (await work(name))!;
    expect(applied.metadata.finalizers).toContain(MANIFEST_WORK_CLEANUP_FINALIZER);
    expect(applied.status?.resourceStatus?.manifests?.map((m) => m.resourceMeta.kind).sort()).toEqual([
      "ConfigMap",
      "Deployment",
    ]);

    // No deployment controller runs here: the test writes the status the real agent reads back.
    await managed.mergePatch(
      deploymentType,
      { name: "app", namespace: target },
      { status: { replicas: 3, readyReplicas: 2, availableReplicas: 2 } },
      "status",
    );
    await eventually(
      "feedback from the real agent in the ManifestWork",
      async () => {
        const manifests = (await work(name))?.status?.resourceStatus?.manifests ?? [];
        const values = manifests.find((m) => m.resourceMeta.kind === "Deployment")?.statusFeedback?.values;
        return (values ?? []).some((v) => v.name === "ReadyReplicas");
      },
      ROUND_TRIP_MS,
    );
    const manifests = (await work(name))!.status!.resourceStatus!.manifests!;
    const values = manifests.find((m) => m.resourceMeta.kind === "Deployment")!.statusFeedback!.values!;
    const byName = Object.fromEntries(values.map((v) => [v.name, v.fieldValue]));
    expect(byName["ReadyReplicas"]).toEqual({ type: "Integer", integer: 2 });
    expect(byName["desired"]).toEqual({ type: "Integer", integer: 3 });

    // Someone else wipes the reported status: our server no longer holds the report once written,
    // so it asks the real agent for this work's status again, and the feedback comes back.
    await service.mergePatch<ManifestWork>(
      ManifestWorkResource,
      { name, namespace: consumer },
      { status: { resourceStatus: null } },
      "status",
    );
    await eventually(
      "the real agent's feedback written again after the status was wiped",
      async () => JSON.stringify((await work(name))?.status?.resourceStatus ?? {}).includes("ReadyReplicas"),
      ROUND_TRIP_MS,
    );

    // Version bump: one manifest replaced, the other changed.
    const current = (await work(name))!;
    await service.mergePatch<ManifestWork>(
      ManifestWorkResource,
      { name, namespace: consumer },
      {
        spec: {
          workload: {
            manifests: [
              configMapManifest(target, "second", { b: "2" }),
              deploymentManifest(target, "app", 3),
            ],
          },
        },
      },
    );
    expect((await work(name))!.metadata.generation).toBeGreaterThan(current.metadata.generation ?? 0);
    await eventually(
      "the real agent applied v2 and deleted the removed manifest",
      async () =>
        (await managed.find(configMapType, "second", target)) !== undefined &&
        (await managed.find(configMapType, "first", target)) === undefined,
      ROUND_TRIP_MS,
    );

    await service.delete(ManifestWorkResource, { name, namespace: consumer });
    await eventually(
      "delete confirmed by the real agent and the finalizer released",
      async () => {
        return (await work(name)) === undefined;
      },
      ROUND_TRIP_MS,
    );
    expect(await managed.find(configMapType, "second", target)).toBeUndefined();
    expect(await managed.find(deploymentType, "app", target)).toBeUndefined();
  });
});

describe("our maestro-agent with the real maestro server", () => {
  const consumer = "mgmt-2";
  const managed = clientFor(consumer);
  const stop = new AbortController();
  let realServer: RealMaestroServer | undefined;

  beforeAll(async () => {
    realServer = await startMaestroServer({ workDir, mqtt: await mqttFor("maestro") });
    await realServer.createConsumer(consumer);
    const agent = new MaestroAgent({
      consumer,
      kube: managed,
      broker: {
        url: broker.url,
        ...(await broker.credentials(consumer).then((c) => ({
          caFile: c.caPath,
          certFile: c.certPath,
          keyFile: c.keyPath,
        }))),
        backoff: fastBackoff,
      },
      statusSyncMs: 500,
    });
    void agent.start(stop.signal);
    await eventually("our agent connected", () => agent.connection.isConnected());
  }, 300_000);

  afterAll(async () => {
    stop.abort();
    await realServer?.stop();
  });

  async function bundle(id: string): Promise<ResourceBundle | undefined> {
    return realServer!.getBundle(id);
  }

  it("applies a bundle created through Maestro's API, reports status to it and confirms a delete", async () => {
    const id = await realServer!.createBundle({
      consumer,
      manifests: [
        configMapManifest(target, "bundle-cm", { v: "1" }),
        deploymentManifest(target, "bundle-app", 3),
      ],
      manifestConfigs: [
        {
          resourceIdentifier: {
            group: "apps",
            resource: "deployments",
            name: "bundle-app",
            namespace: target,
          },
          feedbackRules: [{ type: "WellKnownStatus" }],
        },
      ],
    });
    await eventually(
      "our agent applied the bundle and Maestro shows Applied",
      async () => {
        const b = await bundle(id);
        return (
          conditionOf(b?.status?.conditions, "Applied")?.status === "True" &&
          (await managed.find(configMapType, "bundle-cm", target)) !== undefined
        );
      },
      ROUND_TRIP_MS,
    );
    const reported = (await bundle(id))!;
    expect(reported.consumer_name).toBe(consumer);
    expect(reported.status?.ObservedVersion).toBe(reported.version);

    await managed.mergePatch(
      deploymentType,
      { name: "bundle-app", namespace: target },
      { status: { replicas: 3, readyReplicas: 3, availableReplicas: 3 } },
      "status",
    );
    await eventually(
      "feedback visible through Maestro's REST API",
      async () => JSON.stringify((await bundle(id))?.status?.resourceStatus ?? []).includes("ReadyReplicas"),
      ROUND_TRIP_MS,
    );

    const before = (await bundle(id))!;
    await realServer!.updateBundle(
      id,
      {
        consumer,
        manifests: [
          configMapManifest(target, "bundle-cm", { v: "2" }),
          deploymentManifest(target, "bundle-app", 3),
        ],
      },
      before.version,
    );
    await eventually(
      "the update applied and observed",
      async () => {
        const cm = await managed.find(configMapType, "bundle-cm", target);
        const b = await bundle(id);
        return (
          (cm?.["data"] as Record<string, string> | undefined)?.["v"] === "2" &&
          b?.status?.ObservedVersion === b?.version
        );
      },
      ROUND_TRIP_MS,
    );

    await realServer!.deleteBundle(id);
    await eventually(
      "delete confirmed: Maestro forgets the bundle and the objects are gone",
      async () =>
        (await bundle(id)) === undefined &&
        (await managed.find(configMapType, "bundle-cm", target)) === undefined,
      ROUND_TRIP_MS,
    );
    expect(await managed.find(deploymentType, "bundle-app", target)).toBeUndefined();
  });
});
