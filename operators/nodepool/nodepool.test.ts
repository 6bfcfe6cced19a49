/** The HyperShift NodePool a node pool becomes: what a user sets on the pool reaches it. */
import { describe, expect, it } from "vitest";
import { sampleCluster, sampleFixedPool, sampleRegion } from "../../test/support/samples.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { hyperShiftNodePool } from "./nodepool.ts";

const release = { version: "4.19.7", image: "release:4.19.7", channelGroups: ["stable" as const] };

function hyperShiftOf(
  edit: (azure: ReturnType<typeof sampleFixedPool>["spec"]["platform"]["azure"]) => void,
) {
  const cluster = sampleCluster();
  cluster.metadata.uid = "uid-demo";
  const pool = sampleFixedPool();
  edit(pool.spec.platform.azure);
  return hyperShiftNodePool(pool, cluster, clusterNames(cluster, sampleRegion()), release).spec.platform
    .azure;
}

describe("a node pool's OS disk", () => {
  it("is persisted unless the pool asks for an ephemeral one (HyperShift's osDisk.persistence)", () => {
    expect(hyperShiftOf(() => undefined)?.osDisk.persistence).toBe("Persistent");
    const ephemeral = hyperShiftOf((azure) => {
      azure.osDisk = { ...azure.osDisk, diskType: "Ephemeral" };
    });
    expect(ephemeral?.osDisk.persistence).toBe("Ephemeral");
    const managed = hyperShiftOf((azure) => {
      azure.osDisk = { ...azure.osDisk, diskType: "Managed" };
    });
    expect(managed?.osDisk.persistence).toBe("Persistent");
  });
});

describe("a node pool's disk encryption set", () => {
  it("reaches HyperShift's osDisk.encryptionSetID, and is left out when the pool names none", () => {
    const id =
      "/subscriptions/6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10/resourceGroups/keys/providers/Microsoft.Compute/diskEncryptionSets/des";
    const withSet = hyperShiftOf((azure) => {
      azure.osDisk = { ...azure.osDisk, encryptionSetId: id };
    });
    expect(withSet?.osDisk.encryptionSetID).toBe(id);
    expect(hyperShiftOf(() => undefined)?.osDisk).not.toHaveProperty("encryptionSetID");
  });
});
