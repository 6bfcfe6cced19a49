/**
 * The HyperShift simulator against the real HostedCluster and NodePool CRDs on mgmt-1: creation to
 * Available, scaling (to zero too), an upgrade, an injected failure, a restart mid-rollout, and a
 * deletion that takes the NodePools and the control-plane namespace with it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HYPERSHIFT_FINALIZER,
  HostedClusterResource,
  NodePoolResource,
  type HostedCluster,
  type NodePool,
  type NodePoolCondition,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { SIMULATOR_NAME, HyperShiftSimulator } from "../../hack/hypershift-simulator/controller.ts";
import { FAIL_ANNOTATION } from "../../hack/hypershift-simulator/release.ts";
import {
  ENCRYPTION_CONFIG_SECRET,
  MIGRATED_KEY_HASH_ANNOTATION,
  keyFingerprint,
} from "../../hack/hypershift-simulator/etcd-encryption.ts";
import { ClusterRegistry, type Cluster } from "../../operators/runtime/clusters.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { metricsRegistry } from "../../operators/runtime/metrics.ts";
import { clientFor, eventually, namespaceType, secretType, tempNamespace } from "../support/fixtures.ts";
import {
  RELEASE_4_19_7,
  RELEASE_4_19_8,
  hostedClusterFixture,
  nodePoolFixture,
} from "../support/hypershift.ts";
import { queueAdds, queueIdle, reconciledSince } from "../support/metrics.ts";
import { kubeConfigFor } from "../support/region.ts";

const PROVISION_MS = 1_500;
const DELETE_MS = 200;

const mgmt = clientFor("mgmt-1");

function condition(
  list: readonly (Condition | NodePoolCondition)[] | undefined,
  type: string,
): Condition | NodePoolCondition | undefined {
  return list?.find((c) => c.type === type);
}

const getHc = (ns: string, name: string) => mgmt.get<HostedCluster>(HostedClusterResource, name, ns);
const getNp = (ns: string, name: string) => mgmt.get<NodePool>(NodePoolResource, name, ns);
const hcCondition = async (ns: string, name: string, type: string) =>
  condition((await getHc(ns, name)).status?.conditions, type);

/** A freshly provisioned HostedCluster "demo" on 4.19.7, as HyperShift reports one. */
function expectProvisioned(hc: HostedCluster): void {
  const name = hc.metadata.name ?? "";
  const status = hc.status ?? {};
  expect(hc.metadata.finalizers).toContain(HYPERSHIFT_FINALIZER);
  expect(status.version?.history?.[0]).toMatchObject({ state: "Completed", version: "4.19.7" });
  expect(status.version?.desired).toEqual({ image: RELEASE_4_19_7, version: "4.19.7" });
  expect(status.controlPlaneVersion?.history?.[0]).toMatchObject({ state: "Completed", version: "4.19.7" });
  expect(status.controlPlaneEndpoint).toEqual({ host: `api.${name}.example.com`, port: 443 });
  expect(status.kubeconfig).toEqual({ name: `${name}-admin-kubeconfig` });
  expect(status.payloadArch).toBe("Multi");
  expect(condition(status.conditions, "Progressing")).toMatchObject({
    status: "False",
    reason: "AsExpected",
  });
  expect(condition(status.conditions, "Degraded")).toMatchObject({ status: "False", reason: "AsExpected" });
}

/** One simulator on mgmt-1, started and stopped on demand (the restart test runs two in turn). */
function simulatorRunner() {
  const registry = new ClusterRegistry();
  let running: { stop: AbortController; done: Promise<void> } | undefined;
  return {
    start(cluster: Cluster = registry.add("mgmt-1", kubeConfigFor("mgmt-1"))): void {
      const stop = new AbortController();
      const simulator = new HyperShiftSimulator({
        cluster,
        provisionDelayMs: PROVISION_MS,
        deleteDelayMs: DELETE_MS,
      });
      running = { stop, done: simulator.start(stop.signal) };
    },
    async stop(): Promise<void> {
      running?.stop.abort();
      await running?.done;
      registry.stopAll();
      running = undefined;
    },
  };
}

describe("HyperShift simulator", () => {
  const sim = simulatorRunner();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  describe("one HostedCluster through its life (steps in order)", () => {
    const name = "demo";
    let ns: { name: string; remove(): Promise<void> };
    let hcRef: { name: string; namespace: string };
    const workers = () => getNp(ns.name, `${name}-workers`);
    const auto = () => getNp(ns.name, `${name}-auto`);
    const patchNp = (pool: string, patch: unknown) =>
      mgmt.mergePatch(NodePoolResource, { name: `${name}-${pool}`, namespace: ns.name }, patch);

    beforeAll(async () => {
      ns = await tempNamespace(mgmt, "hs");
      hcRef = { name, namespace: ns.name };
      await mgmt.create(secretType, {
        metadata: { name: "pull-secret", namespace: ns.name },
        type: "kubernetes.io/dockerconfigjson",
        stringData: { ".dockerconfigjson": '{"auths":{}}' },
      });
    });
    afterAll(() => ns.remove());

    it("creates: Progressing first, then Available with version history and endpoint", async () => {
      await mgmt.create(HostedClusterResource, hostedClusterFixture(ns.name, name));
      await mgmt.create(
        NodePoolResource,
        nodePoolFixture(ns.name, `${name}-workers`, { clusterName: name, replicas: 2 }),
      );
      const autoscaled = { clusterName: name, autoScaling: { min: 1, max: 3 } };
      await mgmt.create(NodePoolResource, nodePoolFixture(ns.name, `${name}-auto`, autoscaled));
      await eventually("the HostedCluster to be provisioning", async () => {
        const available = await hcCondition(ns.name, name, "Available");
        return available?.status === "False" && available.reason === "WaitingForAvailable";
      });
      expect((await hcCondition(ns.name, name, "Progressing"))?.status).toBe("True");
      expect(condition((await workers()).status?.conditions, "Ready")?.reason).toBe("WaitingForAvailable");
      await eventually(
        "Available",
        async () => (await hcCondition(ns.name, name, "Available"))?.status === "True",
      );
      expectProvisioned(await getHc(ns.name, name));
      expect(await mgmt.find(secretType, `${name}-admin-kubeconfig`, ns.name)).toBeDefined();
      expect(await mgmt.find(namespaceType, `${ns.name}-${name}`)).toBeDefined();
    });

    it("brings the NodePools up once the HostedCluster is Available, then writes nothing more", async () => {
      await eventually("the NodePools to be Ready", async () => {
        const pools = await Promise.all([workers(), auto()]);
        return pools.every((np) => condition(np.status?.conditions, "Ready")?.status === "True");
      });
      const w = await workers();
      expect(w.status).toMatchObject({ replicas: 2, version: "4.19.7" });
      expect(condition(w.status?.conditions, "AllMachinesReady")?.status).toBe("True");
      expect(condition(w.status?.conditions, "UpdatingVersion")?.status).toBe("False");
      expect(condition(w.status?.conditions, "AutorepairEnabled")?.status).toBe("True");
      const a = await auto();
      expect(a.status?.replicas).toBe(1);
      expect(condition(a.status?.conditions, "AutoscalingEnabled")).toMatchObject({
        status: "True",
        message: "Maximum nodes: 3, Minimum nodes: 1",
      });
      // Nudge the HostedCluster (an annotation the simulator ignores) and wait until both controllers
      // have reconciled it and its NodePools since: a steady state reconciled again writes nothing.
      const queues = ["hostedcluster", "nodepool"].map((kind) => `${SIMULATOR_NAME}-${kind}-mgmt-1`);
      for (const q of queues) await eventually(`${q} to be idle`, () => queueIdle(q));
      const adds = await Promise.all(queues.map(queueAdds));
      const nudged = await mgmt.mergePatch<HostedCluster>(HostedClusterResource, hcRef, {
        metadata: { annotations: { "test.hcp.aro.dev/nudge": "1" } },
      });
      const before = [nudged.metadata.resourceVersion, w.metadata.resourceVersion];
      for (const [i, q] of queues.entries())
        await eventually(`${q} to reconcile after the nudge`, reconciledSince(q, adds[i]!));
      const after = [
        (await getHc(ns.name, name)).metadata.resourceVersion,
        (await workers()).metadata.resourceVersion,
      ];
      expect(after).toEqual(before);
    });

    it("scales a NodePool up and down to zero", async () => {
      await patchNp("workers", { spec: { replicas: 3 } });
      await eventually(
        "scaling",
        async () => condition((await workers()).status?.conditions, "Ready")?.status === "False",
      );
      await eventually("three nodes", async () => (await workers()).status?.replicas === 3);
      await patchNp("workers", { spec: { replicas: 0 } });
      await eventually("no nodes and Ready", async () => {
        const np = await workers();
        return np.status?.replicas === 0 && condition(np.status.conditions, "Ready")?.status === "True";
      });
      expect(condition((await workers()).status?.conditions, "AllNodesHealthy")).toMatchObject({
        status: "False",
        reason: "AsExpected",
        message: "NodePool set to no replicas",
      });
    });

    it("upgrades: a Partial history entry while Available, then Completed; NodePools follow their own image", async () => {
      await mgmt.mergePatch(HostedClusterResource, hcRef, { spec: { release: { image: RELEASE_4_19_8 } } });
      await eventually("the upgrade to start", async () => {
        const head = (await getHc(ns.name, name)).status?.version?.history?.[0];
        return head?.version === "4.19.8" && head.state === "Partial";
      });
      expect(await hcCondition(ns.name, name, "Progressing")).toMatchObject({
        status: "True",
        reason: "Progressing",
      });
      expect((await hcCondition(ns.name, name, "Available"))?.status).toBe("True");
      await eventually("the upgrade to complete", async () => {
        return (await getHc(ns.name, name)).status?.version?.history?.[0]?.state === "Completed";
      });
      const hc = await getHc(ns.name, name);
      expect(hc.status?.version?.history?.map((h) => [h.version, h.state])).toEqual([
        ["4.19.8", "Completed"],
        ["4.19.7", "Completed"],
      ]);
      expect(hc.status?.controlPlaneVersion?.history?.[0]).toMatchObject({
        version: "4.19.8",
        state: "Completed",
      });
      await patchNp("auto", { spec: { release: { image: RELEASE_4_19_8 } } });
      await eventually("the NodePool to run 4.19.8", async () => (await auto()).status?.version === "4.19.8");
    });

    it("is Degraded with the annotation's reason until the annotation goes", async () => {
      const fail = (value: string | null) => ({ metadata: { annotations: { [FAIL_ANNOTATION]: value } } });
      await mgmt.mergePatch(HostedClusterResource, hcRef, fail("EtcdQuorumLost: etcd lost quorum"));
      await eventually(
        "Degraded",
        async () => (await hcCondition(ns.name, name, "Degraded"))?.status === "True",
      );
      const conditions = (await getHc(ns.name, name)).status?.conditions;
      expect(condition(conditions, "Degraded")).toMatchObject({
        reason: "EtcdQuorumLost",
        message: "etcd lost quorum",
      });
      expect(condition(conditions, "Available")).toMatchObject({ status: "False", reason: "EtcdQuorumLost" });
      await patchNp("auto", fail("InstanceTerminated: VM deleted out of band"));
      await eventually("the NodePool not Ready", async () => {
        return condition((await auto()).status?.conditions, "Ready")?.reason === "InstanceTerminated";
      });
      await mgmt.mergePatch(HostedClusterResource, hcRef, fail(null));
      await eventually(
        "recovered",
        async () => (await hcCondition(ns.name, name, "Available"))?.status === "True",
      );
      expect((await hcCondition(ns.name, name, "Degraded"))?.status).toBe("False");
    });

    it("records Events and counts transitions", async () => {
      const events = await mgmt.list<KubeObject & { reason?: string; source?: { component?: string } }>(
        eventType,
        {
          namespace: ns.name,
          fieldSelector: `involvedObject.name=${name}`,
        },
      );
      const reasons = events.items.filter((e) => e.source?.component === SIMULATOR_NAME).map((e) => e.reason);
      expect(reasons).toEqual(
        expect.arrayContaining(["RolloutStarted", "Available", "UpgradeStarted", "EtcdQuorumLost"]),
      );
      const metric = await metricsRegistry.getSingleMetricAsString("hypershift_simulator_transitions_total");
      expect(metric).toContain('reason="Available"');
    });

    it("deletes the NodePools, then the control-plane namespace, then itself", async () => {
      await mgmt.delete(HostedClusterResource, hcRef);
      await eventually(
        "the HostedCluster, its NodePools and its namespace to be gone",
        async () => {
          const left = await Promise.all([
            mgmt.find(HostedClusterResource, name, ns.name),
            mgmt.find(NodePoolResource, `${name}-workers`, ns.name),
            mgmt.find(NodePoolResource, `${name}-auto`, ns.name),
            mgmt.find(namespaceType, `${ns.name}-${name}`),
          ]);
          return left.every((o) => o === undefined);
        },
        60_000,
      );
      expect(await mgmt.find(secretType, `${name}-admin-kubeconfig`, ns.name)).toBeUndefined();
    });
  });

  it("checks the Azure KMS key and re-encrypts etcd data after a rotation, recording the key on the control plane", async () => {
    const ns = await tempNamespace(mgmt, "hs");
    const key = (keyVersion: string) => ({ keyVaultName: "kv-demo", keyName: "etcd", keyVersion });
    const [v1, v2] = ["0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"].map(key);
    const hc = hostedClusterFixture(ns.name, "kms");
    hc.spec.secretEncryption = {
      type: "kms",
      kms: {
        provider: "Azure",
        azure: { activeKey: v1!, kms: { credentialsSecretName: "kms-kms", objectEncoding: "utf-8" } },
      },
    };
    await mgmt.create(HostedClusterResource, hc);
    await eventually("the first key taken", async () => {
      const c = await hcCondition(ns.name, "kms", "EtcdDataEncryptionUpToDate");
      return c?.status === "True";
    });
    expect(await hcCondition(ns.name, "kms", "ValidAzureKMSConfig")).toMatchObject({ status: "True" });
    const hashOnControlPlane = async () =>
      (await mgmt.find(secretType, ENCRYPTION_CONFIG_SECRET, `${ns.name}-kms`))?.metadata.annotations?.[
        MIGRATED_KEY_HASH_ANNOTATION
      ];
    expect(await hashOnControlPlane()).toBe(keyFingerprint(v1!));
    // Rotate: version 2 active, version 1 the backup; the data moves to version 2.
    const rotate = { spec: { secretEncryption: { kms: { azure: { activeKey: v2, backupKey: v1 } } } } };
    const { metadata } = await mgmt.mergePatch<HostedCluster>(
      HostedClusterResource,
      { name: "kms", namespace: ns.name },
      rotate,
    );
    await eventually("the re-encryption under way", async () => {
      const c = await hcCondition(ns.name, "kms", "EtcdDataEncryptionUpToDate");
      return c?.reason === "ReEncryptionInProgress" && c.observedGeneration === metadata.generation;
    });
    await eventually("the re-encryption done", async () => {
      return (await hcCondition(ns.name, "kms", "EtcdDataEncryptionUpToDate"))?.status === "True";
    });
    expect(await hashOnControlPlane()).toBe(keyFingerprint(v2!));
    // A version Key Vault never gave: HyperShift's AzureError, naming the key.
    await mgmt.mergePatch(
      HostedClusterResource,
      { name: "kms", namespace: ns.name },
      {
        spec: { secretEncryption: { kms: { azure: { activeKey: key("v3"), backupKey: v2 } } } },
      },
    );
    await eventually("the key refused", async () => {
      return (await hcCondition(ns.name, "kms", "ValidAzureKMSConfig"))?.status === "False";
    });
    const refused = await hcCondition(ns.name, "kms", "ValidAzureKMSConfig");
    expect(refused).toMatchObject({ reason: "AzureError" });
    expect((refused as Condition).message).toContain("failed to encrypt data using KMS (key: etcd/v3)");
    await mgmt.delete(HostedClusterResource, { name: "kms", namespace: ns.name });
    await eventually(
      "the HostedCluster gone",
      async () => !(await mgmt.find(HostedClusterResource, "kms", ns.name)),
      60_000,
    );
    await ns.remove();
  });

  it("picks a rollout up where the status says it was after a restart", async () => {
    const ns = await tempNamespace(mgmt, "hs");
    await mgmt.create(HostedClusterResource, hostedClusterFixture(ns.name, "restart"));
    await eventually("the rollout to start", async () => {
      return (await getHc(ns.name, "restart")).status?.version?.history?.[0]?.state === "Partial";
    });
    await sim.stop();
    const started = (await getHc(ns.name, "restart")).status?.version?.history?.[0]?.startedTime;
    await new Promise((r) => setTimeout(r, PROVISION_MS + 500));
    sim.start();
    await eventually("the rollout to complete", async () => {
      return (await hcCondition(ns.name, "restart", "Available"))?.status === "True";
    });
    const history = (await getHc(ns.name, "restart")).status?.version?.history;
    expect(history).toHaveLength(1);
    expect(history?.[0]?.startedTime).toBe(started);
    await mgmt.delete(HostedClusterResource, { name: "restart", namespace: ns.name });
    await eventually(
      "the HostedCluster to be gone",
      async () => {
        return (await mgmt.find(HostedClusterResource, "restart", ns.name)) === undefined;
      },
      60_000,
    );
    await ns.remove();
  });
});
