/**
 * A cluster's whole life on the local region: `kubectl apply` of an HcpCluster and two NodePools
 * on the service cluster; the controllers place it, provision Azure in the ARM emulator, carry the
 * HostedCluster and NodePools over MQTT to a management cluster where the HyperShift simulator
 * runs them, and status comes back. Then an upgrade, a scale, a failing HyperShift, and a delete
 * that leaves nothing behind anywhere.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { dump } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import {
  HostedClusterResource,
  NodePoolResource as HyperShiftNodePoolResource,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { clusterInfo, kubectlPath } from "../support/region.ts";
import { sampleAutoscalingPool, sampleCluster, sampleFixedPool } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const exec = promisify(execFile);
const FAIL_ANNOTATION = "hypershift-simulator.hcp.aro.dev/fail";
const LIFECYCLE_MS = 90_000;

let arm: ArmEmulator;
let running: TestStack | undefined;
let scratch: { path: string; remove(): Promise<void> };
const service = clientFor("service");
const customer = `customer-${process.pid}`;

function cond(
  obj: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

async function kubectlApply(objects: KubeObject[]): Promise<void> {
  const file = join(scratch.path, `apply-${Date.now()}.yaml`);
  await writeFile(file, objects.map((o) => dump(o)).join("---\n"));
  await exec(kubectlPath(), ["--kubeconfig", clusterInfo("service").kubeconfigPath, "apply", "-f", file]);
}

const getCluster = (name: string) => service.find<HcpCluster>(HcpClusterResource, name, customer);
const getPool = (name: string) => service.find<NodePool>(NodePoolResource, name, customer);

/** Both sample pools report their replicas at the cluster's first version. */
async function expectPoolsAtFirstVersion(): Promise<void> {
  expect((await getPool("workers"))?.status).toMatchObject({
    replicas: 2,
    readyReplicas: 2,
    version: "4.19.7",
  });
  expect((await getPool("batch"))?.status).toMatchObject({ replicas: 1, version: "4.19.7" });
}

/** status.hostedClusters of a ManagementCluster. */
async function hostedClustersOn(managementCluster: string): Promise<number | undefined> {
  const mc = await service.find<KubeObject & { status?: { hostedClusters?: number } }>(
    {
      group: "hcp.aro.dev",
      version: "v1alpha1",
      kind: "ManagementCluster",
      plural: "managementclusters",
      namespaced: false,
    },
    managementCluster,
  );
  return mc?.status?.hostedClusters;
}

beforeAll(async () => {
  scratch = await scratchDir("lifecycle-apply");
  running = await startTestStack("lifecycle", { simulator: { provisionDelayMs: 1_000, deleteDelayMs: 300 } });
  arm = running.arm;
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  await running?.stop();
  await scratch?.remove();
});

describe("cluster lifecycle", () => {
  const cluster = sampleCluster();
  cluster.metadata.namespace = customer;
  cluster.metadata.name = "e2e";
  cluster.metadata.annotations = {
    "hcp.aro.dev/correlation-request-id": "5f0c8f7e-e2e0-4c1a-9d7e-000000000001",
  };
  cluster.spec.dns.baseDomainPrefix = `e2e${process.pid % 100000}`;
  // Its own managed resource group: a cluster another test left behind in the shared service
  // apiserver may still hold the sample's while the next stack deletes it.
  cluster.spec.platform.azure.managedResourceGroup = `lifecycle-${process.pid}-managed`;
  delete cluster.spec.placement;
  const fixed = sampleFixedPool();
  fixed.metadata = { name: "workers", namespace: customer };
  fixed.spec.clusterRef.name = "e2e";
  const auto = sampleAutoscalingPool();
  auto.metadata = { name: "batch", namespace: customer };
  auto.spec.clusterRef.name = "e2e";

  let mgmt: KubeClient;
  let hcNamespace = "";

  it("reaches Ready from kubectl apply, with status filled", async () => {
    await kubectlApply([cluster, fixed, auto]);
    await eventually(
      "the HcpCluster and both node pools Ready",
      async () => {
        const [c, p1, p2] = await Promise.all([getCluster("e2e"), getPool("workers"), getPool("batch")]);
        return [c, p1, p2].every((o) => cond(o, "Ready")?.status === "True");
      },
      LIFECYCLE_MS,
    );
    const c = (await getCluster("e2e"))!;
    expect(c.status).toMatchObject({
      phase: "Ready",
      version: "4.19.7",
      clusterID: c.metadata.uid,
      observedGeneration: c.metadata.generation,
    });
    expect(c.status?.apiURL).toBe(`https://api.${cluster.spec.dns.baseDomainPrefix}.hcp.example.com:443`);
    expect(c.status?.consoleURL).toContain(`apps.${cluster.spec.dns.baseDomainPrefix}.hcp.example.com`);
    expect(["mgmt-1", "mgmt-2"]).toContain(c.status?.managementCluster);
    for (const step of [
      "Placed",
      "DnsZoneReady",
      "DnsDelegated",
      "IngressReady",
      "HostedClusterAvailable",
      "DnsRecordsReady",
    ])
      expect(cond(c, step)?.status, step).toBe("True");
    hcNamespace = c.status?.hostedClusterNamespace ?? "";
    expect(hcNamespace).toBe(`ocm-local-${c.metadata.uid}`);
    mgmt = clientFor(c.status!.managementCluster!);
    const work = await service.list<ManifestWork>(ManifestWorkResource, {
      labelSelector: `${WORK_LABELS.clusterUid}=${c.metadata.uid}`,
    });
    const clusterWork = work.items.find((w) => !w.metadata.labels?.[WORK_LABELS.nodePool]);
    expect(clusterWork?.metadata.annotations?.["hcp.aro.dev/correlation-request-id"]).toBe(
      "5f0c8f7e-e2e0-4c1a-9d7e-000000000001",
    );
    expect(
      await mgmt.find(HostedClusterResource, cluster.spec.dns.baseDomainPrefix, hcNamespace),
    ).toBeDefined();
    await expectPoolsAtFirstVersion();

    const zone = `${cluster.spec.dns.baseDomainPrefix}.hcp.example.com`.toLowerCase();
    const ids = arm.resources().map((r) => r.id.toLowerCase());
    expect(ids.some((id) => id.endsWith(`/dnszones/${zone}`))).toBe(true);
    expect(
      ids.some((id) => id.endsWith(`/dnszones/hcp.example.com/ns/${cluster.spec.dns.baseDomainPrefix}`)),
    ).toBe(true);
    expect(ids.some((id) => id.endsWith(`/dnszones/${zone}/a/api`))).toBe(true);
    // This stack's controllers also provision other test files' clusters in the shared service
    // cluster: only this cluster's load balancers count.
    const balancers = arm
      .resources()
      .filter((r) => r.id.toLowerCase().includes("/loadbalancers/"))
      .filter((r) => Object.values(r.tags ?? {}).includes(c.metadata.uid ?? ""));
    expect(balancers).toHaveLength(1);

    // The load is written at most every 10 s while only the count moves.
    await eventually(
      "the management cluster's load counts the cluster",
      async () => ((await hostedClustersOn(c.status!.managementCluster!)) ?? 0) >= 1,
      30_000,
    );
  });

  it("upgrades the control plane and the pool that follows it, and scales the other", async () => {
    await service.mergePatch(
      HcpClusterResource,
      { name: "e2e", namespace: customer },
      { spec: { version: { id: "4.20" } } },
    );
    await service.mergePatch(
      NodePoolResource,
      { name: "workers", namespace: customer },
      { spec: { replicas: 3 } },
    );
    await eventually(
      "the upgrade and the scale through",
      async () => {
        const [c, p1, p2] = await Promise.all([getCluster("e2e"), getPool("workers"), getPool("batch")]);
        return (
          c?.status?.version === "4.20.2" &&
          cond(c, "Ready")?.status === "True" &&
          p1?.status?.replicas === 3 &&
          p2?.status?.version === "4.20.2"
        );
      },
      LIFECYCLE_MS,
    );
    expect((await getPool("workers"))?.status?.version).toBe("4.19.7");
    const hc = await mgmt.find<KubeObject & { spec?: { release?: { image?: string } } }>(
      HostedClusterResource,
      cluster.spec.dns.baseDomainPrefix,
      hcNamespace,
    );
    expect(hc?.spec?.release?.image).toContain("4.20.2");
  });

  it("scales a node pool to zero and back, never Degraded on the way", async () => {
    let sawDegraded = false;
    await service.mergePatch(
      NodePoolResource,
      { name: "workers", namespace: customer },
      { spec: { replicas: 0 } },
    );
    await eventually(
      "zero nodes, still Ready",
      async () => {
        const p = await getPool("workers");
        sawDegraded ||= cond(p, "Degraded")?.status === "True";
        return p?.status?.replicas === 0 && cond(p, "Ready")?.status === "True";
      },
      LIFECYCLE_MS,
    );
    expect(sawDegraded).toBe(false);
    await service.mergePatch(
      NodePoolResource,
      { name: "workers", namespace: customer },
      { spec: { replicas: 2 } },
    );
    await eventually(
      "two nodes again",
      async () => (await getPool("workers"))?.status?.readyReplicas === 2,
      LIFECYCLE_MS,
    );
  });

  it("shows a failing HyperShift NodePool as Degraded with its reason, and recovers", async () => {
    const name = `${cluster.spec.dns.baseDomainPrefix}-workers`;
    await mgmt.mergePatch(
      HyperShiftNodePoolResource,
      { name, namespace: hcNamespace },
      {
        metadata: {
          annotations: { [FAIL_ANNOTATION]: "InvalidVMSize: Standard_D8s_v3 is not offered in zone 1" },
        },
      },
    );
    await eventually(
      "the pool Degraded",
      async () => cond(await getPool("workers"), "Degraded")?.status === "True",
      LIFECYCLE_MS,
    );
    expect(cond(await getPool("workers"), "Degraded")).toMatchObject({ reason: "NodePoolInvalidVMSize" });
    await mgmt.mergePatch(
      HyperShiftNodePoolResource,
      { name, namespace: hcNamespace },
      {
        metadata: { annotations: { [FAIL_ANNOTATION]: null } },
      },
    );
    await eventually(
      "the pool Ready again",
      async () => cond(await getPool("workers"), "Ready")?.status === "True",
      LIFECYCLE_MS,
    );
  });

  it("refuses an unknown version with a clear condition", async () => {
    // Within the minor: the CRD lets the user take it back (it refuses minor downgrades itself).
    await service.mergePatch(
      NodePoolResource,
      { name: "workers", namespace: customer },
      { spec: { version: { id: "4.19.99" } } },
    );
    await eventually(
      "ValidVersion False on the pool",
      async () => cond(await getPool("workers"), "ValidVersion")?.reason === "UnknownVersion",
    );
    expect(cond(await getPool("workers"), "ValidVersion")?.message).toContain("4.19.99 is not offered");
    expect(cond(await getPool("workers"), "Degraded")?.status).toBe("True");
    await service.mergePatch(
      NodePoolResource,
      { name: "workers", namespace: customer },
      { spec: { version: { id: "4.19" } } },
    );
    await eventually(
      "the pool valid again",
      async () => cond(await getPool("workers"), "Ready")?.status === "True",
    );
  });

  it("shows a failing HyperShift as Degraded with its reason, and recovers", async () => {
    const name = cluster.spec.dns.baseDomainPrefix;
    await mgmt.mergePatch(
      HostedClusterResource,
      { name, namespace: hcNamespace },
      {
        metadata: { annotations: { [FAIL_ANNOTATION]: "EtcdQuorumLost: etcd lost quorum" } },
      },
    );
    await eventually(
      "Degraded with HyperShift's reason",
      async () => cond(await getCluster("e2e"), "Degraded")?.status === "True",
      LIFECYCLE_MS,
    );
    const degraded = cond(await getCluster("e2e"), "Degraded")!;
    expect(degraded.reason).toBe("HostedClusterEtcdQuorumLost");
    expect(degraded.message).toContain("etcd lost quorum");
    expect((await getCluster("e2e"))?.status?.phase).toBe("Degraded");
    await mgmt.mergePatch(
      HostedClusterResource,
      { name, namespace: hcNamespace },
      {
        metadata: { annotations: { [FAIL_ANNOTATION]: null } },
      },
    );
    await eventually(
      "recovered",
      async () => cond(await getCluster("e2e"), "Ready")?.status === "True",
      LIFECYCLE_MS,
    );
  });

  it("deletes everything: node pools, HostedCluster, management-cluster objects and Azure resources", async () => {
    const uid = (await getCluster("e2e"))!.metadata.uid!;
    await service.delete(HcpClusterResource, { name: "e2e", namespace: customer });
    await eventually(
      "the HcpCluster gone",
      async () => (await getCluster("e2e")) === undefined,
      LIFECYCLE_MS,
    );
    expect(await getPool("workers")).toBeUndefined();
    expect(await getPool("batch")).toBeUndefined();
    const works = await service.list<ManifestWork>(ManifestWorkResource, {
      labelSelector: `${WORK_LABELS.clusterUid}=${uid}`,
    });
    expect(works.items).toEqual([]);
    await eventually(
      "the management-cluster namespace gone",
      async () => (await mgmt.find(namespaceType, hcNamespace)) === undefined,
      LIFECYCLE_MS,
    );
    const leftovers = await mgmt.list(HyperShiftNodePoolResource, { namespace: hcNamespace });
    expect(leftovers.items).toEqual([]);
    const mine = arm.resources().filter((r) => JSON.stringify(r.tags ?? {}).includes(uid));
    expect(mine).toEqual([]);
    const ids = arm.resources().map((r) => r.id.toLowerCase());
    expect(
      ids.some((id) => id.includes(cluster.spec.platform.azure.managedResourceGroup.toLowerCase())),
    ).toBe(false);
  });
});
