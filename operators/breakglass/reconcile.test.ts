/**
 * A deleting credential's work: the informer may not show one applied moments before (a watch
 * relisting after an apiserver restart), so the finalizer stays until a DELETE by the work's name
 * finds nothing.
 */
import { describe, expect, it } from "vitest";
import type { BreakglassCredential, HcpCluster } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource } from "../api/work/v1.ts";
import { RecordingWriter, testContext } from "../../test/support/fakes.ts";
import { FakeLister } from "../../test/support/lister.ts";
import { sampleCluster, sampleManagementCluster, sampleRegion } from "../../test/support/samples.ts";
import { deleteWork } from "./reconcile.ts";
import { BREAKGLASS_UID_INDEX, type BreakglassReconcilerDeps, type CredentialScope } from "./scope.ts";

const cluster: HcpCluster = {
  ...sampleCluster(),
  metadata: { name: "demo", namespace: "default", uid: "uid-demo" },
  status: { managementCluster: "mgmt-1" },
};

const credential: BreakglassCredential = {
  apiVersion: "hcp.aro.dev/v1alpha1",
  kind: "BreakglassCredential",
  metadata: {
    name: "sre",
    namespace: "default",
    uid: "0123456789abcdef",
    deletionTimestamp: "2026-01-01T00:00:00Z",
  },
  spec: { clusterRef: { name: "demo" }, requester: "sre@example.com" },
};

function scopeWith(writer: RecordingWriter): CredentialScope {
  const deps = {
    clusters: new FakeLister([cluster]),
    managementClusters: new FakeLister([sampleManagementCluster("mgmt-1")]),
    works: new FakeLister([], { [BREAKGLASS_UID_INDEX]: () => [] }),
    region: sampleRegion(),
    writer,
  } as unknown as BreakglassReconcilerDeps;
  return { deps, credential } as CredentialScope;
}

describe("a deleting credential's work", () => {
  it("is deleted by its name when the informer does not show it, and held for until it is gone", async () => {
    const writer = new RecordingWriter();
    const work = { name: "uid-demo-bg-01234567", namespace: "mgmt-1" };
    writer.seed(ManifestWorkResource, work);
    const scope = scopeWith(writer);
    await deleteWork(testContext(), scope);
    expect(writer.of("delete", "ManifestWork")).toMatchObject([work]);
    expect(scope.deleting).toBe(true);

    writer.vanish(ManifestWorkResource, work);
    const later = scopeWith(writer);
    await deleteWork(testContext(), later);
    expect(later.deleting).toBe(false);
  });
});
