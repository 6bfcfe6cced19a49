/**
 * A cluster's work as the cluster controller writes it (a HostedCluster, its signing key's Secret
 * and its backup Schedule, with their real feedback rules): once the watches have synced, its
 * status syncs read none of them from the apiserver, and the feedback still follows the objects.
 */
import { describe, expect, test } from "vitest";
import { SecretResource } from "../api/core.ts";
import {
  HOSTED_CLUSTER_FEEDBACK_PATHS,
  SIGNING_KEY_FEEDBACK_PATHS,
  SIGNING_KEY_ID_ANNOTATION,
  appliedSigningKeyId,
  feedbackOf,
  hostedReport,
} from "../api/v1alpha1/feedback.ts";
import { HostedClusterResource } from "../api/hypershift/v1beta1/meta.ts";
import { ScheduleResource, VELERO_NAMESPACE } from "../api/velero/v1/index.ts";
import type { JsonPath, Manifest, ManifestConfigOption, ManifestWorkObject } from "../api/work/v1.ts";
import { BACKUP_FEEDBACK_PATHS, backupReport } from "../cluster/backup.ts";
import type { KubeObject, ResourceType } from "../runtime/kube.ts";
import { DEFAULT_ALLOWED_KINDS } from "./apply.ts";
import { DEFAULT_WATCHED_RESOURCES, watchTransform } from "./objects.ts";
import { REAPPLY_MS, STATUS_SYNC_MS, received, setup, types } from "../../test/support/maestro-agent.ts";

// The fake discovery serves HyperShift's and Velero's kinds too.
types["hypershift.openshift.io/v1beta1/HostedCluster"] = HostedClusterResource;
types["velero.io/v1/Schedule"] = ScheduleResource;

const NS = "clusters-demo";
const key = (keyVersion: string) => ({ keyVaultName: "vault", keyName: "etcd", keyVersion });

const hostedCluster = (activeKey = key("v1")): Manifest => ({
  apiVersion: "hypershift.openshift.io/v1beta1",
  kind: "HostedCluster",
  metadata: { name: "demo", namespace: NS },
  spec: {
    platform: { type: "Azure", azure: { location: "eastus" } },
    secretEncryption: { type: "kms", kms: { provider: "Azure", azure: { activeKey } } },
  },
});
const signingKey = (kid = "kid-1"): Manifest => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "sa-signing-key", namespace: NS, annotations: { [SIGNING_KEY_ID_ANNOTATION]: kid } },
  data: { key: "c2VjcmV0" },
});
const schedule: Manifest = {
  apiVersion: "velero.io/v1",
  kind: "Schedule",
  metadata: { name: "demo-backup", namespace: VELERO_NAMESPACE },
  spec: { schedule: "0 * * * *", paused: false, template: { includedNamespaces: [NS] } },
};

const config = (type: ResourceType, m: Manifest, paths: JsonPath[]): ManifestConfigOption => ({
  resourceIdentifier: {
    group: type.group,
    resource: type.plural,
    name: m.metadata?.name ?? "",
    namespace: m.metadata?.namespace ?? "",
  },
  feedbackRules: [{ type: "JSONPaths", jsonPaths: paths }],
});

function clusterWork(manifests: Manifest[]) {
  const [hc, secret] = manifests as [Manifest, Manifest];
  return {
    manifests: [...manifests, schedule],
    manifestConfigs: [
      config(HostedClusterResource, hc, HOSTED_CLUSTER_FEEDBACK_PATHS),
      config(SecretResource, secret, SIGNING_KEY_FEEDBACK_PATHS),
      config(ScheduleResource, schedule, BACKUP_FEEDBACK_PATHS),
    ],
  };
}

function cluster(work = clusterWork([hostedCluster(), signingKey()])) {
  const t = setup(work, DEFAULT_ALLOWED_KINDS, DEFAULT_WATCHED_RESOURCES);
  // HyperShift's and Velero's objects carry a generation (the fake apiserver keeps the one seeded).
  t.kube.seed(HostedClusterResource, {
    ...(hostedCluster() as KubeObject),
    metadata: { name: "demo", namespace: NS, generation: 1 },
  });
  t.kube.seed(ScheduleResource, {
    ...(schedule as KubeObject),
    metadata: { name: "demo-backup", namespace: VELERO_NAMESPACE, generation: 1 },
  });
  /** Someone writes the object; the watch of its kind, if any, delivers what it keeps of it. */
  const write = (type: ResourceType, name: string, ns: string, change: (o: KubeObject) => KubeObject) => {
    const written = t.kube.seed(type, change(t.kube.peek(type, name, ns)!));
    t.watches.get(type.plural)?.update(watchTransform(type)(written));
  };
  const syncWatches = () => {
    for (const [type, name, ns] of [
      [HostedClusterResource, "demo", NS],
      [ScheduleResource, "demo-backup", VELERO_NAMESPACE],
    ] as const) {
      t.watches.get(type.plural)!.synced = true;
      write(type, name, ns, (o) => o);
    }
  };
  const feedback = () => {
    const work: ManifestWorkObject = { metadata: {}, status: t.publisher.last };
    return {
      hc: hostedReport(feedbackOf(work, { kind: "HostedCluster", name: "demo" })),
      signingKeyId: appliedSigningKeyId(feedbackOf(work, { kind: "Secret", name: "sa-signing-key" })),
      backup: backupReport(feedbackOf(work, { kind: "Schedule", name: "demo-backup" })),
    };
  };
  /** GETs of the work's objects (not of the agent's own record). */
  const reads = () =>
    t.kube.calls
      .filter((c) => c.verb === "find" && !c.resource.startsWith("applied"))
      .map((c) => `${c.resource} ${c.name}`);
  const applies = () => t.kube.calls.filter((c) => c.verb === "apply" && !c.resource.startsWith("applied"));
  return { ...t, write, syncWatches, feedback, reads, applies };
}

const withStatus = (status: object) => (o: KubeObject) => ({ ...o, status });
const available = { type: "Available", status: "True", reason: "AsExpected", message: "" };

describe("a cluster's work whose feedback the watches and the remembered metadata answer", () => {
  test("its status syncs read nothing from the apiserver, and report what the objects say", async () => {
    const t = cluster();
    // Until the watches have synced, the work is polled.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    t.syncWatches();
    const appliedAt = t.clock.ms;

    // HyperShift reports; the watch's event brings it.
    t.write(HostedClusterResource, "demo", NS, withStatus({ conditions: [available] }));
    t.clock.ms += STATUS_SYNC_MS;
    // Nothing to poll: the next look is the drift check.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: appliedAt + REAPPLY_MS - t.clock.ms + 1 });
    expect(t.feedback().hc.conditions).toEqual([available]);
    expect(t.feedback().hc.kmsKeys).toEqual({ active: key("v1") });
    expect(t.feedback().signingKeyId).toBe("kid-1");
    expect(t.feedback().backup).toMatchObject({ paused: false });

    // Someone changes the HostedCluster's keys: read from the watch's cache.
    const rotated = hostedCluster(key("v2")).spec as object;
    t.write(HostedClusterResource, "demo", NS, (o) => ({
      ...o,
      spec: rotated,
      metadata: { ...o.metadata, generation: 2 },
    }));
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.feedback().hc.kmsKeys).toEqual({ active: key("v2") });

    // Velero takes a backup: its status write moves the Schedule's generation (no status subresource).
    t.write(ScheduleResource, "demo-backup", VELERO_NAMESPACE, (o) => ({
      ...o,
      metadata: { ...o.metadata, generation: 2 },
      status: { phase: "Enabled", lastBackup: "2030-01-01T01:00:00Z" },
    }));
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.feedback().backup).toMatchObject({ phase: "Enabled", lastBackup: "2030-01-01T01:00:00Z" });

    // Several more syncs, as events or a resync would bring them.
    for (let i = 0; i < 3; i++) {
      t.clock.ms += STATUS_SYNC_MS;
      await t.reconcile();
    }
    expect(t.reads()).toEqual([]);
    expect(t.feedback().signingKeyId).toBe("kid-1");
  });

  test("the drift check reads each of them once from the apiserver and, as they hold their manifests, applies none", async () => {
    const t = cluster();
    await t.reconcile();
    t.syncWatches();
    const appliesBefore = t.applies().length;
    // Others write beside what the manifests set, and Velero's status write moves the Schedule's generation.
    t.write(SecretResource, "sa-signing-key", NS, (o) => ({
      ...o,
      metadata: { ...o.metadata, labels: { "added-by": "someone-else" } },
    }));
    t.write(ScheduleResource, "demo-backup", VELERO_NAMESPACE, (o) => ({
      ...o,
      metadata: { ...o.metadata, generation: 2 },
      status: { phase: "Enabled" },
    }));
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.reads()).toEqual([]);

    t.clock.ms += REAPPLY_MS;
    await t.reconcile();
    // The drift check compares the whole spec: the watch keeps only what feedback reads.
    expect(t.reads().sort()).toEqual([
      "hostedclusters.hypershift.openshift.io demo",
      "schedules.velero.io demo-backup",
      "secrets sa-signing-key",
    ]);
    expect(t.applies()).toHaveLength(appliesBefore);
    expect(t.feedback().signingKeyId).toBe("kid-1");
    expect(t.feedback().backup).toMatchObject({ phase: "Enabled" });
    // Until the next drift check, nothing is read again.
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.reads()).toHaveLength(3);
  });

  test("a key rotation is a new generation, applied in full: its key ID is reported at once", async () => {
    const t = cluster();
    await t.reconcile();
    t.syncWatches();
    t.store.upsert(received({ generation: 2, ...clusterWork([hostedCluster(), signingKey("kid-2")]) }));
    t.clock.ms += 1000;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    expect(t.feedback().signingKeyId).toBe("kid-2");
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.feedback().signingKeyId).toBe("kid-2");
    expect(t.reads()).toEqual([]);
  });

  test("a rule reading a spec field the watch does not keep still reads the HostedCluster at each sync", async () => {
    const paths = [
      ...HOSTED_CLUSTER_FEEDBACK_PATHS,
      { name: "location", path: ".spec.platform.azure.location" },
    ];
    const work = clusterWork([hostedCluster(), signingKey()]);
    work.manifestConfigs[0] = config(HostedClusterResource, hostedCluster(), paths);
    const t = cluster(work);
    await t.reconcile();
    t.syncWatches();
    t.clock.ms += STATUS_SYNC_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(t.reads()).toEqual(["hostedclusters.hypershift.openshift.io demo"]);
  });
});
