/**
 * config/bases/operators/admission.yaml on the real apiserver: every new HcpCluster, NodePool,
 * ExternalAuth, BreakglassCredential and BreakglassRevocation carries its controller's finalizer
 * from creation, so one deleted before any controller saw it still waits for the controllers (a
 * cluster for its node pools, a pool or a credential for its work, an external auth until the
 * HostedCluster no longer carries it). The original-uid annotation, which names a cluster's
 * namespaces and work, is set only by a region restorer and never changed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installAdmission, removeAdmission } from "../../hack/harness/admission.ts";
import {
  BREAKGLASS_FINALIZER,
  CLUSTER_FINALIZER,
  EXTERNAL_AUTH_FINALIZER,
  NODE_POOL_FINALIZER,
  REVOCATION_FINALIZER,
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  ExternalAuthResource,
  HcpClusterResource,
  NodePoolResource,
  ORIGINAL_UID_ANNOTATION,
  originalUid,
  type BreakglassCredential,
  type BreakglassRevocation,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { kubectl, serviceAccountKubeConfig } from "../support/rbac.ts";
import { sampleCluster, sampleExternalAuth, sampleFixedPool } from "../support/samples.ts";

const service = clientFor("service");
let ns: Awaited<ReturnType<typeof tempNamespace>>;
const created: Array<{ type: ResourceType; name: string }> = [];

async function create<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
  const written = await service.create<T>(type, {
    ...obj,
    metadata: { ...obj.metadata, namespace: ns.name },
  });
  created.push({ type, name: written.metadata.name ?? "" });
  return written;
}

beforeAll(async () => {
  ns = await tempNamespace(service, "admission");
  await installAdmission(service, ns.name);
});

afterAll(async () => {
  await removeAdmission(service).catch(() => undefined);
  for (const { type, name } of created) {
    const ref = { name, namespace: ns.name };
    await service.mergePatch(type, ref, { metadata: { finalizers: null } }).catch(() => undefined);
    await service.delete(type, ref);
  }
  await ns?.remove();
});

describe("the finalizers admission policy", () => {
  it("puts the controllers' finalizers on new clusters and node pools, once, beside others", async () => {
    const cluster = await create(HcpClusterResource, sampleCluster());
    expect(cluster.metadata.finalizers).toEqual([CLUSTER_FINALIZER]);
    const pool = await create(NodePoolResource, sampleFixedPool());
    expect(pool.metadata.finalizers).toEqual([NODE_POOL_FINALIZER]);

    const listed = sampleCluster();
    listed.metadata = { name: "listed", finalizers: ["example.com/keep", CLUSTER_FINALIZER] };
    expect((await create(HcpClusterResource, listed)).metadata.finalizers).toEqual([
      "example.com/keep",
      CLUSTER_FINALIZER,
    ]);
  });

  it("puts the finalizers on new external auths, break-glass credentials and revocations", async () => {
    const auth = await create(ExternalAuthResource, sampleExternalAuth());
    expect(auth.metadata.finalizers).toEqual([EXTERNAL_AUTH_FINALIZER]);
    const credential = await create<BreakglassCredential>(BreakglassCredentialResource, {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "BreakglassCredential",
      metadata: { name: "sre" },
      spec: { clusterRef: { name: "demo" }, requester: "sre@example.com" },
    });
    expect(credential.metadata.finalizers).toEqual([BREAKGLASS_FINALIZER]);
    const revocation = await create<BreakglassRevocation>(BreakglassRevocationResource, {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "BreakglassRevocation",
      metadata: { name: "all" },
      spec: { clusterRef: { name: "demo" }, requester: "sre@example.com" },
    });
    expect(revocation.metadata.finalizers).toEqual([REVOCATION_FINALIZER]);
  });

  it("holds a cluster deleted before any controller saw it", async () => {
    const c = sampleCluster();
    c.metadata = { name: "early" };
    await create(HcpClusterResource, c);
    await service.delete(HcpClusterResource, { name: "early", namespace: ns.name });
    const held = await service.find<HcpCluster>(HcpClusterResource, "early", ns.name);
    expect(held?.metadata.deletionTimestamp).toBeTruthy();
  });

  it("lets only a region restorer name an object by an original uid, and nobody change it", async () => {
    // A tenant with every right on clusters in its namespace, as a kubectl user of the service has.
    await kubectl("service", "-n", ns.name, "create", "serviceaccount", "tenant");
    await kubectl(
      "service",
      "-n",
      ns.name,
      "create",
      "role",
      "clusters",
      "--verb=*",
      "--resource=hcpclusters.hcp.aro.dev",
    );
    await kubectl(
      "service",
      "-n",
      ns.name,
      "create",
      "rolebinding",
      "tenant",
      "--role=clusters",
      `--serviceaccount=${ns.name}:tenant`,
    );
    const tenant = new KubeClient("tenant", await serviceAccountKubeConfig("service", ns.name, "tenant"));
    const copied = sampleCluster();
    copied.metadata = {
      name: "copied",
      namespace: ns.name,
      annotations: { [ORIGINAL_UID_ANNOTATION]: "0b7e5f0e-victim" },
    };
    // A policy applies a moment after it is stored: the evidence is the refusal itself.
    let attempt = 0;
    await eventually(
      "a tenant's cluster with a copied original uid refused",
      async () => {
        const name = `copied-${attempt++}`;
        try {
          await tenant.create(HcpClusterResource, { ...copied, metadata: { ...copied.metadata, name } });
        } catch (err) {
          expect(String(err)).toMatch(
            /metadata\.annotations\[hcp\.aro\.dev\/original-uid\]: only a region restore/,
          );
          return true;
        }
        created.push({ type: HcpClusterResource, name });
        return false;
      },
      30_000,
    );
    const own = sampleCluster();
    own.metadata = { name: "own", namespace: ns.name };
    await tenant.create(HcpClusterResource, own);
    created.push({ type: HcpClusterResource, name: "own" });
    const ref = { name: "own", namespace: ns.name };
    await expect(
      tenant.mergePatch(HcpClusterResource, ref, {
        metadata: { annotations: { [ORIGINAL_UID_ANNOTATION]: "x" } },
      }),
    ).rejects.toThrow(/original-uid\]: immutable/);

    // The restore's own identity (here the admin, in system:masters) sets it; then it is fixed.
    const restored = await create(HcpClusterResource, copied);
    expect(originalUid(restored)).toBe("0b7e5f0e-victim");
    const restoredRef = { name: "copied", namespace: ns.name };
    for (const value of ["other", null])
      await expect(
        service.mergePatch(HcpClusterResource, restoredRef, {
          metadata: { annotations: { [ORIGINAL_UID_ANNOTATION]: value } },
        }),
      ).rejects.toThrow(/original-uid\]: immutable \(was "0b7e5f0e-victim"\)/);
    // Other annotations still change.
    await service.mergePatch(HcpClusterResource, restoredRef, {
      metadata: { annotations: { note: "kept" } },
    });
  });

  it("leaves what is created after it is removed alone", async () => {
    await removeAdmission(service);
    // Policies stop applying a moment after they go: wait for the evidence, a create without it.
    let pool: NodePool | undefined;
    let i = 0;
    await eventually(
      "a node pool created without the finalizer",
      async () => {
        const p = sampleFixedPool();
        p.metadata = { name: `after-${i++}` };
        pool = await create(NodePoolResource, p);
        return !pool.metadata.finalizers?.length;
      },
      30_000,
    );
    expect(pool?.metadata.finalizers ?? []).toEqual([]);
  });
});
