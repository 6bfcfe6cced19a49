/** Customer-managed etcd keys through the cluster reconciler: carried, rotated, refused, observed. */
import { describe, expect, it } from "vitest";
import type { HcpCluster, HcpClusterStatus } from "../api/v1alpha1/index.ts";
import { summariseWorkSpec, type ManifestWork } from "../api/work/v1.ts";
import type { HostedCluster } from "../api/hypershift/v1beta1/index.ts";
import { RetryableStepError } from "./azure-step.ts";
import { carriedKeys, keysAnnotation } from "./etcd-encryption.ts";
import { cluster, condition, world } from "../../test/support/cluster-world.ts";
import { workAppliedCondition } from "../../test/support/samples.ts";

describe("customer-managed etcd keys", () => {
  const KMS_IDENTITY =
    "/subscriptions/s/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kms";
  const key = (keyVersion: string) => ({ keyVaultName: "kv-demo", keyName: "etcd", keyVersion });

  function encrypted(version: string, generation = 1): HcpCluster {
    const c = cluster({ generation });
    c.spec.platform.azure.identities.controlPlaneOperators.kms = KMS_IDENTITY;
    c.spec.etcd = {
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: { kms: { vaultName: "kv-demo", activeKey: { name: "etcd", version } } },
      },
    };
    return c;
  }

  const lastWork = (w: ReturnType<typeof world>) =>
    w.writer.of("apply", "ManifestWork").at(-1)?.body as ManifestWork;
  const keysIn = (work: ManifestWork) => hostedIn(work).spec.secretEncryption?.kms?.azure;
  const hostedIn = (work: ManifestWork) =>
    work.spec!.workload!.manifests!.find((m) => m.kind === "HostedCluster") as unknown as HostedCluster;

  const raw = (name: string, value: unknown) => ({
    name,
    fieldValue: { type: "JsonRaw" as const, jsonRaw: JSON.stringify(value) },
  });
  /** HyperShift's condition `type` as `[status, reason, message]`, about `observedGeneration`. */
  const verdict = (type: string, [status, reason, message]: string[], observedGeneration: number) => ({
    type,
    status,
    reason,
    message,
    observedGeneration,
    lastTransitionTime: "2026-08-01T00:00:00Z",
  });

  /**
   * The work as the informer shows it once the agent applied `generation` of it: the HostedCluster
   * at `hcGeneration` carrying the work's keys, and HyperShift's verdicts on it.
   */
  function applied(
    work: ManifestWork,
    generation: number,
    hc: { generation: number; reEncrypted?: boolean; kmsValid?: [string, string, string] },
  ): ManifestWork {
    const azure = keysIn(work);
    const kms = hc.kmsValid ?? ["True", "AsExpected", "All is well"];
    const upToDate = hc.reEncrypted
      ? ["True", "ReEncryptionCompleted", "done"]
      : ["False", "ReEncryptionInProgress", "busy"];
    const values = [
      raw("available", verdict("Available", ["True", "AsExpected", "ok"], hc.generation)),
      { name: "generation", fieldValue: { type: "Integer" as const, integer: hc.generation } },
      raw("validConfiguration", verdict("ValidConfiguration", ["True", "AsExpected", "ok"], hc.generation)),
      raw("validAzureKMSConfig", verdict("ValidAzureKMSConfig", kms, hc.generation)),
      raw("etcdDataEncryptionUpToDate", verdict("EtcdDataEncryptionUpToDate", upToDate, hc.generation)),
      ...(azure?.activeKey ? [raw("kmsActiveKey", azure.activeKey)] : []),
      ...(azure?.backupKey ? [raw("kmsBackupKey", azure.backupKey)] : []),
    ];
    return {
      ...work,
      metadata: { ...work.metadata, generation },
      status: {
        conditions: [workAppliedCondition(generation, "2026-08-01T00:00:00Z")],
        resourceStatus: {
          manifests: [
            {
              resourceMeta: {
                ordinal: 3,
                group: "hypershift.openshift.io",
                version: "v1beta1",
                kind: "HostedCluster",
                resource: "hostedclusters",
                name: hostedIn(work).metadata.name ?? "",
                namespace: hostedIn(work).metadata.namespace ?? "",
              },
              statusFeedback: { values },
              conditions: [],
            },
          ],
        },
      },
    };
  }

  it("carries the key, keeps the old version as backup until HyperShift has re-encrypted, then drops it", async () => {
    const w = world({ clusters: [encrypted("1")] });
    await w.reconcile();
    const first = lastWork(w);
    expect(keysIn(first)).toMatchObject({ activeKey: key("1") });
    expect(keysIn(first)?.backupKey).toBeUndefined();
    expect(condition(w.writer.lastStatus(), "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "False",
      reason: "WaitingForHyperShift",
    });
    w.works.set(summariseWorkSpec(applied(first, 1, { generation: 1, reEncrypted: true })));

    // The customer rotates to version 2: the old version stays readable as the backup key.
    w.clusters.set(encrypted("2", 2));
    await w.reconcile();
    const rotating = lastWork(w);
    expect(keysIn(rotating)).toMatchObject({
      activeKey: key("2"),
      backupKey: key("1"),
    });
    expect(condition(w.writer.lastStatus(), "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "False",
      reason: "ReEncryptionInProgress",
    });
    // Still re-encrypting, and a third version asked for meanwhile: nothing moves (one backup key).
    w.works.set(summariseWorkSpec(applied(rotating, 2, { generation: 2 })));
    w.clusters.set(encrypted("3", 3));
    await w.reconcile();
    // The work only records that HyperShift found version 2 usable; the HostedCluster is unchanged.
    expect(keysIn(lastWork(w))).toEqual(keysIn(rotating));
    expect(carriedKeys(lastWork(w))).toEqual({ active: key("2"), backup: key("1"), activeUsable: true });
    expect(condition(w.writer.lastStatus(), "EtcdDataEncryptionUpToDate")?.message).toContain(
      "version 3 rotates in once it is done",
    );
    // Re-encrypted with version 2: version 3 rotates in, 2 its backup; 1 is gone.
    w.works.set(summariseWorkSpec(applied(lastWork(w), 3, { generation: 2, reEncrypted: true })));
    await w.reconcile();
    expect(keysIn(lastWork(w))).toMatchObject({
      activeKey: key("3"),
      backupKey: key("2"),
    });
    // A restarted controller reads the rotation from the work alone and carries on.
    const restarted = world({
      clusters: [encrypted("3", 3)],
      works: [applied(lastWork(w), 3, { generation: 3, reEncrypted: true })],
    });
    await restarted.reconcile();
    const settled = keysIn(lastWork(restarted));
    expect(settled?.activeKey).toEqual(key("3"));
    expect(settled?.backupKey).toBeUndefined();
    expect(condition(restarted.writer.lastStatus(), "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "True",
    });
  });

  it("replaces a key HyperShift refuses and never found usable, keeping the backup: a mistyped version is fixed", async () => {
    const w = world({ clusters: [encrypted("1")] });
    await w.reconcile();
    w.works.set(summariseWorkSpec(applied(lastWork(w), 1, { generation: 1, reEncrypted: true })));
    w.clusters.set(encrypted("2x", 2));
    await w.reconcile();
    const mistyped = lastWork(w);
    expect(keysIn(mistyped)).toMatchObject({ activeKey: key("2x"), backupKey: key("1") });
    const refused: [string, string, string] = ["False", "AzureError", "failed to encrypt data using KMS"];
    w.works.set(summariseWorkSpec(applied(mistyped, 2, { generation: 2, kmsValid: refused })));
    w.clusters.set(encrypted("2", 3));
    await w.reconcile();
    expect(keysIn(lastWork(w))).toMatchObject({ activeKey: key("2"), backupKey: key("1") });
    // A key HyperShift did use is another matter: it becomes the backup, never dropped.
    const usable = world({
      clusters: [encrypted("3", 4)],
      works: [applied(lastWork(w), 3, { generation: 3, kmsValid: refused })],
    });
    usable.works.set(
      summariseWorkSpec({
        ...applied(lastWork(w), 3, { generation: 3, kmsValid: refused }),
        metadata: {
          ...lastWork(w).metadata,
          generation: 3,
          annotations: keysAnnotation({ active: key("2"), backup: key("1"), activeUsable: true }),
        },
      }),
    );
    await usable.reconcile();
    expect(keysIn(lastWork(usable))).toMatchObject({ activeKey: key("2"), backupKey: key("1") });
  });

  it("decides nothing from a cached work older than its own last write", async () => {
    const w = world({ clusters: [encrypted("1")] });
    await w.reconcile();
    w.works.set(summariseWorkSpec(applied(lastWork(w), 1, { generation: 1, reEncrypted: true })));
    w.clusters.set(encrypted("2", 2));
    await w.reconcile();
    expect(w.writer.of("apply", "ManifestWork")).toHaveLength(2);
    // The informer still shows generation 1 (with version 1 alone, re-encrypted): a rotation to 3
    // decided from it would drop version 2, which may already encrypt data.
    w.clusters.set(encrypted("3", 3));
    // Retried with backoff (the watch brings it back too); generation 3 is not observed meanwhile.
    await expect(w.reconcile()).rejects.toBeInstanceOf(RetryableStepError);
    expect(w.writer.of("apply", "ManifestWork")).toHaveLength(2);
    expect(w.writer.lastStatus<HcpClusterStatus>()?.observedGeneration).not.toBe(3);
  });

  it("a key HyperShift cannot use holds Ready and degrades the cluster with HyperShift's reason and message", async () => {
    const w = world({ clusters: [encrypted("0000")] });
    await w.reconcile();
    const message =
      "failed to encrypt data using KMS (key: etcd/0000): KeyNotFound: A key with (name/id) etcd/0000 was not found in this key vault";
    w.works.set(
      summariseWorkSpec(
        applied(lastWork(w), 1, { generation: 4, kmsValid: ["False", "AzureError", message] }),
      ),
    );
    w.observeStatus();
    await w.reconcile();
    const status = w.writer.lastStatus<HcpClusterStatus>();
    expect(condition(status, "HostedClusterValid")).toMatchObject({
      status: "False",
      reason: "HostedClusterAzureError",
      message: `The etcd encryption key kv-demo/etcd version 0000 cannot be used: ${message}`,
    });
    expect(condition(status, "Degraded")).toMatchObject({
      status: "True",
      reason: "HostedClusterAzureError",
    });
    expect(condition(status, "Degraded")?.message).toContain(message);
    expect(condition(status, "Progressing")?.status).toBe("False");
    expect(condition(status, "Ready")?.status).toBe("False");
  });

  it("without a customer key only ValidConfiguration counts, and only about the generation the agent read", async () => {
    const w = world();
    await w.reconcile();
    const work = applied(lastWork(w), 1, {
      generation: 2,
      kmsValid: ["Unknown", "StatusUnknown", "Azure KMS is not configured"],
    });
    w.works.set(summariseWorkSpec(work));
    w.observeStatus();
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "HostedClusterValid")).toMatchObject({ status: "True" });
    // HyperShift's verdict is about an older generation than the agent read: wait for its word.
    const values = work.status!.resourceStatus!.manifests![0]!.statusFeedback!.values!;
    values[1] = { name: "generation", fieldValue: { type: "Integer", integer: 3 } };
    w.works.set(summariseWorkSpec(work));
    w.observeStatus();
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "HostedClusterValid")).toMatchObject({
      status: "False",
      reason: "WaitingForHyperShift",
    });
  });
});
