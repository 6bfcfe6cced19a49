/**
 * The management cluster controller against the real service apiserver: a ManagementCluster that
 * hosts an HcpCluster is held by its finalizer when deleted, says why (Deleting, an event), and
 * goes once the cluster placed on it is gone. Only this controller runs: the test writes the
 * placement (status.managementCluster) as the cluster controller would, and its HcpCluster has no
 * finalizer, so deleting it removes it. Every step waits for evidence in the objects.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  MANAGEMENT_CLUSTER_FINALIZER,
  ManagementClusterResource,
  type HcpCluster,
  type ManagementCluster,
} from "../../operators/api/v1alpha1/index.ts";
import { ManagementClusterController } from "../../operators/managementcluster/controller.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { kubeConfigFor } from "../support/region.ts";
import { sampleCluster, sampleManagementCluster } from "../support/samples.ts";

const service = clientFor("service");
const suffix = `${process.pid % 100000}-${Date.now().toString(36)}`;
const mcName = `mc-del-${suffix}`;
const stop = new AbortController();
const registry = new ClusterRegistry(silentLogger);
let ns: Awaited<ReturnType<typeof tempNamespace>>;

const getMc = () => service.find<ManagementCluster>(ManagementClusterResource, mcName);
const condition = (mc: ManagementCluster | undefined, type: string): Condition | undefined =>
  mc?.status?.conditions?.find((c) => c.type === type);

type CoreEvent = KubeObject & { reason?: string; type?: string; message?: string };

beforeAll(async () => {
  ns = await tempNamespace(service, "mc-del");
  const controller = new ManagementClusterController({
    cluster: registry.add("service", kubeConfigFor("service")),
    log: silentLogger,
  });
  void controller.start(stop.signal);
});

afterAll(async () => {
  // Whatever a failed run left, without the controller: its finalizer goes with it.
  stop.abort();
  registry.stopAll();
  const mc = await getMc();
  if (mc)
    await service
      .mergePatch(ManagementClusterResource, { name: mcName }, { metadata: { finalizers: null } })
      .catch(() => undefined);
  await service.delete(ManagementClusterResource, { name: mcName }).catch(() => undefined);
  await ns?.remove();
});

describe("a ManagementCluster that hosts clusters", () => {
  it("is held when deleted, says why, and goes once the last cluster placed on it is gone", async () => {
    const mc = sampleManagementCluster("mgmt-1");
    mc.metadata = { name: mcName };
    mc.spec.consumerName = mcName;
    await service.create(ManagementClusterResource, mc);
    await eventually("the finalizer added", async () =>
      Boolean((await getMc())?.metadata.finalizers?.includes(MANAGEMENT_CLUSTER_FINALIZER)),
    );

    const c = sampleCluster();
    c.metadata = { name: "hosted", namespace: ns.name };
    c.spec.dns.baseDomainPrefix = `del${process.pid % 100000}`;
    delete c.spec.placement;
    await service.create(HcpClusterResource, c);
    // As the cluster controller records a placement.
    await service.mergePatch(
      HcpClusterResource,
      { name: "hosted", namespace: ns.name },
      { status: { managementCluster: mcName } },
      "status",
    );
    const placed = await service.list<HcpCluster>(HcpClusterResource, {
      fieldSelector: `status.managementCluster=${mcName}`,
    });
    expect(placed.items.map((p) => p.metadata.name)).toEqual(["hosted"]);

    await service.delete(ManagementClusterResource, { name: mcName });
    await eventually(
      "Deleting shown",
      async () => condition(await getMc(), "Deleting")?.reason === "HostedClustersPlaced",
    );
    const held = (await getMc())!;
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(held.status?.phase).toBe("Deleting");
    expect(condition(held, "Deleting")).toMatchObject({
      status: "True",
      message: "1 hosted cluster is still placed on it; it is deleted once none is",
    });
    expect(condition(held, "Schedulable")).toMatchObject({ status: "False", reason: "Deleting" });
    await eventually("the event recorded", async () => {
      const events = await service.list<CoreEvent>(eventType, {
        namespace: "default",
        fieldSelector: `involvedObject.name=${mcName}`,
      });
      return events.items.some(
        (e) =>
          e.type === "Warning" &&
          e.reason === "HostedClustersPlaced" &&
          e.message === "Deletion waits: 1 hosted cluster is still placed on it; it is deleted once none is",
      );
    });

    await service.delete(HcpClusterResource, { name: "hosted", namespace: ns.name });
    await eventually("the ManagementCluster gone", async () => (await getMc()) === undefined);
  });
});
