/**
 * The cluster controller facing a hostile world: no room on any management cluster, Azure
 * throttling and failing, and an error only the user can fix. Each is a condition an SRE can act
 * on, never a crash or a retry storm, and each converges once the world recovers.
 */
import { RETRY_ANNOTATION } from "../../operators/api/v1alpha1/labels.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USER_ERRORS, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import {
  HcpClusterResource,
  ManagementClusterResource,
  type HcpCluster,
  type ManagementCluster,
} from "../../operators/api/v1alpha1/index.ts";
import { CLUSTER_CONTROLLER } from "../../operators/cluster/controller.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { queueAdds, queueIdle, reconciledSince } from "../support/metrics.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const service = clientFor("service");
const customer = `faults-${process.pid}`;
const MGMT = ["mgmt-1", "mgmt-2"];

let arm: ArmEmulator;
let running: TestStack | undefined;
let n = 0;

function newCluster(): HcpCluster {
  const c = sampleCluster();
  const name = `f${n++}`;
  c.metadata = { name, namespace: customer };
  c.spec.dns.baseDomainPrefix = `${name}x${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `faults-${name}-managed`;
  delete c.spec.placement;
  return c;
}

const get = (name: string) => service.find<HcpCluster>(HcpClusterResource, name, customer);
const cond = (c: HcpCluster | undefined, type: string): Condition | undefined =>
  c?.status?.conditions?.find((x) => x.type === type);

async function setCapacity(max: number): Promise<void> {
  for (const m of MGMT)
    await service.mergePatch<ManagementCluster>(
      ManagementClusterResource,
      { name: m },
      {
        spec: { capacity: { maxHostedClusters: max } },
      },
    );
}

/** Touches the cluster's metadata: a reconcile, but no new generation. */
async function nudge(name: string): Promise<void> {
  await service.mergePatch(
    HcpClusterResource,
    { name, namespace: customer },
    {
      metadata: { annotations: { "test.hcp.aro.dev/nudge": String(Date.now()) } },
    },
  );
}

async function deleteAndWait(name: string): Promise<void> {
  await service.delete(HcpClusterResource, { name, namespace: customer });
  await eventually(`${name} deleted`, async () => (await get(name)) === undefined, 90_000);
}

beforeAll(async () => {
  running = await startTestStack("faults", {
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    userErrorRecheckMs: 20_000,
  });
  arm = running.arm;
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  await setCapacity(50).catch(() => undefined);
  await running?.stop();
});

describe("cluster controller faults", () => {
  it("waits with NoCapacity while every management cluster is full, and places once room appears", async () => {
    await setCapacity(0);
    const c = newCluster();
    await service.create(HcpClusterResource, c);
    await eventually(
      "NoCapacity",
      async () => cond(await get(c.metadata.name!), "Placed")?.reason === "NoCapacity",
    );
    const waiting = (await get(c.metadata.name!))!;
    expect(cond(waiting, "Placed")?.message).toContain("are full");
    expect(cond(waiting, "Ready")?.status).toBe("False");
    expect(waiting.status?.managementCluster).toBeUndefined();

    await setCapacity(50);
    await eventually(
      "placed and Ready",
      async () => cond(await get(c.metadata.name!), "Ready")?.status === "True",
      90_000,
    );
    const placed = (await get(c.metadata.name!))!.status!.managementCluster!;
    // The load is written at most every 10 s while only the count moves.
    await eventually(
      "the management cluster's load counts the cluster",
      async () =>
        ((await service.find<ManagementCluster>(ManagementClusterResource, placed))?.status?.hostedClusters ??
          0) >= 1,
      30_000,
    );
    await deleteAndWait(c.metadata.name!);
  });

  it("rides out throttling and server errors without the user seeing a failure", async () => {
    const c = newCluster();
    const throttled = arm.faults.throttle(
      { method: "PUT", path: "/dnszones/" },
      { times: 2, retryAfterSeconds: 1 },
    );
    const bare = arm.faults.throttle({ method: "PUT", path: "/publicipaddresses/" }, { times: 1 });
    const failing = arm.faults.serverError(
      { method: "PUT", path: "/loadbalancers/" },
      { times: 2, status: 503 },
    );
    await service.create(HcpClusterResource, c);
    await eventually(
      "Ready",
      async () => cond(await get(c.metadata.name!), "Ready")?.status === "True",
      90_000,
    );
    expect(throttled.hits).toBe(2);
    expect(bare.hits).toBe(1);
    expect(failing.hits).toBe(2);
    expect(cond(await get(c.metadata.name!), "Degraded")?.status).toBe("False");
    await deleteAndWait(c.metadata.name!);
  });

  it("reports a quota error with ARM's code and message, does not storm, and recovers once fixed", async () => {
    const c = newCluster();
    const quota = arm.faults.error(
      { method: "PUT", path: "/publicipaddresses/" },
      { ...USER_ERRORS.quotaExceeded, times: 1000 },
    );
    await service.create(HcpClusterResource, c);
    await eventually(
      "Degraded with QuotaExceeded",
      async () => cond(await get(c.metadata.name!), "Degraded")?.reason === "QuotaExceeded",
    );
    const degraded = (await get(c.metadata.name!))!;
    expect(cond(degraded, "IngressReady")).toMatchObject({ status: "False", reason: "QuotaExceeded" });
    expect(cond(degraded, "Degraded")?.message).toContain(
      "exceeding approved Total Regional Public IP Addresses quota",
    );
    expect(cond(degraded, "Progressing")?.reason).toBe("UserActionRequired");
    expect(degraded.status?.phase).toBe("Degraded");
    // A user error is not retried in a loop: status events and nudges within the recheck interval
    // make no new attempt. The reconciles they cause must have run before that means anything.
    const hitsThen = quota.hits;
    // Idle first, so that the nudge's event finds its key not already waiting and counts as an add.
    await eventually("the cluster controller to be idle", () => queueIdle(CLUSTER_CONTROLLER));
    const addsBefore = await queueAdds(CLUSTER_CONTROLLER);
    await nudge(c.metadata.name!);
    await eventually("the nudged reconcile to finish", reconciledSince(CLUSTER_CONTROLLER, addsBefore));
    expect(quota.hits).toBe(hitsThen);
    // An SRE asks for a retry (the portal's, RETRY_ANNOTATION): the held step is tried again at once.
    await eventually("the cluster controller to be idle", () => queueIdle(CLUSTER_CONTROLLER));
    const addsBeforeRetry = await queueAdds(CLUSTER_CONTROLLER);
    await service.mergePatch(
      HcpClusterResource,
      { name: c.metadata.name!, namespace: customer },
      { metadata: { annotations: { [RETRY_ANNOTATION]: "2026-11-28T23:40:00Z by bob@example.com" } } },
    );
    await eventually("the retried reconcile to finish", reconciledSince(CLUSTER_CONTROLLER, addsBeforeRetry));
    expect(quota.hits).toBeGreaterThan(hitsThen);

    // Quota raised out of band: the next recheck succeeds without any change to the cluster.
    quota.clear();
    await eventually(
      "Ready after the quota is raised",
      async () => cond(await get(c.metadata.name!), "Ready")?.status === "True",
      90_000,
    );
    await deleteAndWait(c.metadata.name!);
    expect(
      arm.resources().filter((r) => JSON.stringify(r.tags ?? {}).includes(degraded.metadata.uid!)),
    ).toEqual([]);
  });
});
