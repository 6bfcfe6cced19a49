/**
 * The region backup end to end: objects of every kind the backup holds are made in the shared
 * service cluster, `hcpctl region backup` seals them into the storage emulator over https, and
 * `hcpctl region restore` brings them into an EMPTY apiserver this test starts (CRDs installed):
 * every object is there with its spec, labels, annotations, finalizers and status, and its owner
 * references point at the new owners. A restore cut short completes when run again; a second
 * restore into the now non-empty cluster from another backup is refused, naming what exists.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer, type ApiServer } from "../../hack/harness/apiserver.ts";
import { crdFilesIn, installCrds } from "../../hack/harness/crds.ts";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { ConfigMapResource, NamespaceResource, SecretResource } from "../../operators/api/core.ts";
import type { KubeObject, ResourceType } from "../../operators/api/meta/v1.ts";
import {
  ARM_LABELS,
  breakglassCredential,
  BreakglassCredentialResource,
  breakglassRevocation,
  BreakglassRevocationResource,
  ExternalAuthResource,
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  ManagementClusterResource,
  NodePoolResource,
  RolloutResource,
  WORK_LABELS,
  GROUP,
  ORIGINAL_UID_ANNOTATION,
  RESTORED_WORK_FINALIZER,
  type HcpCluster,
} from "../../operators/api/v1alpha1/index.ts";
import { SIGNING_KEY_LABEL as CONTROLLER_SIGNING_KEY_LABEL } from "../../operators/cluster/oidc.ts";
import { CATALOG_CONFIGMAP } from "../../operators/releases/catalog.ts";
import { Registry } from "prom-client";
import { readPointer, takeBackup } from "../../operators/regionbackup/backup.ts";
import { RegionBackup } from "../../operators/regionbackup/controller.ts";
import { backupKey, openDocument, type BackedUpObject } from "../../operators/regionbackup/document.ts";
import { RestoreFailedError, restoreRanks, restoreRegion } from "../../operators/regionbackup/restore.ts";
import { entryOfKey, SIGNING_KEY_LABEL, typeKey } from "../../operators/regionbackup/selection.ts";
import { openBackupStore } from "../../operators/regionbackup/store.ts";
import { KubeApiError, KubeClient, type CreateOptions } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, scratchDir, tempNamespace } from "../support/fixtures.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { ensureNamespaceExists, kubectl, serviceAccountKubeConfig } from "../support/rbac.ts";
import { clusterInfo, kubeConfigAt, region } from "../support/region.ts";
import {
  sampleCluster,
  sampleExternalAuth,
  sampleFixedPool,
  sampleManagementCluster,
} from "../support/samples.ts";

const CONTAINER = "region-backups";
const API = "hcp.aro.dev/v1alpha1";
const suffix = `${process.pid}-${Date.now().toString(36)}`;
const condition = (type: string) => ({
  type,
  status: "True",
  reason: "Restored",
  message: `${type} before the backup`,
  lastTransitionTime: "2026-11-28T08:00:00Z",
});

let scratch: Awaited<ReturnType<typeof scratchDir>>;
let storage: StorageEmulator;
let target: ApiServer;
let targetClient: KubeClient;
let keyPath: string;
let sub: { name: string; remove(): Promise<void> };
let ops: { name: string; remove(): Promise<void> };
const service = clientFor("service");
/** What the test made in the service cluster, in creation order, as the apiserver returned it. */
const made: Array<{ type: ResourceType; obj: KubeObject }> = [];

async function make<T extends KubeObject>(type: ResourceType, obj: T, status?: unknown): Promise<T> {
  let created = await service.create<T>(type, obj);
  if (status !== undefined) created = await service.replace<T>(type, { ...created, status }, "status");
  made.push({ type, obj: created });
  return created;
}

const owner = (kind: string, o: KubeObject) => [
  { apiVersion: API, kind, name: o.metadata.name ?? "", uid: o.metadata.uid ?? "", controller: true },
];

const storeFlags = () => [
  "--container-url",
  `${storage.blobServiceUrl}/${CONTAINER}`,
  "--key",
  keyPath,
  "--namespace",
  ops.name,
  "--storage-ca",
  storage.caPath,
  "--anonymous",
];

async function makeRegion(): Promise<void> {
  const mc = sampleManagementCluster("mgmt-1");
  mc.metadata.name = `rb-mgmt-${suffix}`;
  await make(ManagementClusterResource, mc, { conditions: [condition("Schedulable")], hostedClusters: 1 });
  const c = sampleCluster();
  c.metadata = {
    name: "demo",
    namespace: sub.name,
    labels: { [ARM_LABELS.resourceGroup]: "abc123" },
    annotations: { "hcp.aro.dev/cluster-id": "11111111-2222-3333-4444-555555555555" },
    finalizers: ["hcp.aro.dev/region-backup-test"],
  };
  c.spec.dns.baseDomainPrefix = `rb${Date.now().toString(36)}`;
  const cluster = await make<HcpCluster>(HcpClusterResource, c, {
    conditions: [condition("Ready")],
    managementCluster: mc.metadata.name,
    phase: "Ready",
  });
  const pool = sampleFixedPool();
  pool.metadata = {
    name: "demo-workers",
    namespace: sub.name,
    ownerReferences: owner("HcpCluster", cluster),
  };
  await make(NodePoolResource, pool, { conditions: [condition("Ready")] });
  const auth = sampleExternalAuth();
  auth.metadata = { name: "entra", namespace: sub.name, ownerReferences: owner("HcpCluster", cluster) };
  await make(ExternalAuthResource, auth, { conditions: [condition("Ready")] });
  const ask = { cluster, requester: "sre@example.com", reason: "incident 7" };
  const credential = await make(
    BreakglassCredentialResource,
    breakglassCredential({ ...ask, name: "bg-1" }),
    {
      conditions: [condition("Issued")],
    },
  );
  await make(BreakglassRevocationResource, breakglassRevocation({ ...ask, name: "rv-1" }));
  const bgLabel = { [WORK_LABELS.breakglass]: credential.metadata.uid ?? "" };
  // Not held: the operators may not read Secrets outside their namespace (checked below).
  await service.create(SecretResource, {
    metadata: {
      name: "bg-1-kubeconfig",
      namespace: sub.name,
      labels: bgLabel,
      ownerReferences: owner("BreakglassCredential", credential),
    },
    type: "Opaque",
    data: { kubeconfig: Buffer.from("apiVersion: v1").toString("base64") },
  });
  await make(SecretResource, {
    metadata: { name: `bg-key-${suffix}`, namespace: ops.name, labels: bgLabel },
    data: { "tls.key": "a2V5" },
  });
  await make(SecretResource, {
    metadata: {
      name: `sa-signing-key-${cluster.metadata.uid}`,
      namespace: ops.name,
      labels: { [SIGNING_KEY_LABEL]: cluster.metadata.uid ?? "" },
      annotations: { "hcp.aro.dev/cluster": "demo" },
    },
    data: { keyring: Buffer.from('{"active":"k1"}').toString("base64") },
  });
  await make(ConfigMapResource, {
    metadata: { name: "op-0123abcd", namespace: sub.name, labels: { [ARM_LABELS.operation]: "true" } },
    data: { document: '{"status":"Succeeded"}' },
  });
  await make(ConfigMapResource, {
    metadata: { name: CATALOG_CONFIGMAP, namespace: ops.name },
    data: { "catalog.yaml": "releases: []\n" },
  });
  const rollout = await make(
    RolloutResource,
    {
      apiVersion: API,
      kind: "Rollout",
      metadata: { name: `rb-ro-${suffix}` },
      spec: { release: { version: "4.19.10" }, clusters: { names: [`${sub.name}/demo`] } },
    },
    { conditions: [condition("Progressing")] },
  );
  const task = await make(MaintenanceTaskResource, {
    apiVersion: API,
    kind: "MaintenanceTask",
    metadata: { name: `rb-mt-${suffix}`, ownerReferences: owner("Rollout", rollout) },
    spec: { task: "RotateServiceAccountSigningKey", clusters: { names: [`${sub.name}/demo`] } },
  });
  await make(MaintenanceRunResource, {
    apiVersion: API,
    kind: "MaintenanceRun",
    metadata: { name: "run-demo", namespace: sub.name, ownerReferences: owner("MaintenanceTask", task) },
    spec: {
      task: task.metadata.name,
      taskType: "RotateServiceAccountSigningKey",
      clusterRef: { name: "demo" },
    },
  });
  // A cluster being deleted (its finalizer holds it): held, and deleted again after the restore.
  // Its works were gone at the backup, so it is not told to write them again.
  const leaving = sampleCluster();
  leaving.metadata = { name: "leaving", namespace: sub.name, finalizers: ["hcp.aro.dev/region-backup-test"] };
  leaving.spec.dns.baseDomainPrefix = `rl${Date.now().toString(36)}`;
  const created = await service.create(HcpClusterResource, leaving);
  const deleting = { ...condition("Deleting"), reason: "DeletingAzureResources" };
  await service.replace(HcpClusterResource, { ...created, status: { conditions: [deleting] } }, "status");
  await service.delete(HcpClusterResource, { name: "leaving", namespace: sub.name });
  // A namespace being deleted at the backup, held by a cluster's finalizer: deleted again after the
  // restore, so a restore run after that one finds it terminating.
  await service.create(NamespaceResource, { metadata: { name: GOING } });
  const held = sampleCluster();
  held.metadata = { name: "held", namespace: GOING, finalizers: ["hcp.aro.dev/region-backup-test"] };
  held.spec.dns.baseDomainPrefix = `rg${Date.now().toString(36)}`;
  await service.create(HcpClusterResource, held);
  await service.delete(NamespaceResource, { name: GOING });
}

/** The namespace being deleted when the backup is taken. */
const GOING = `rb-going-${suffix}`;

beforeAll(async () => {
  scratch = await scratchDir("region-backup");
  storage = await startStorageEmulator({ workDir: scratch.path, containers: [CONTAINER] });
  keyPath = join(scratch.path, "backup.key");
  await writeFile(keyPath, `${randomBytes(32).toString("base64")}\n`);
  sub = await tempNamespace(service, "rb-sub");
  await service.mergePatch(
    NamespaceResource,
    { name: sub.name },
    { metadata: { labels: { [ARM_LABELS.subscription]: "0000-sub" } } },
  );
  ops = await tempNamespace(service, "rb-ops");
  target = await startApiServer({
    name: `rb-target-${process.pid}`,
    assetsDir: region().assetsDir,
    etcdUrl: region().etcdUrl,
    workDir: scratch.path,
  });
  await installCrds(
    kubeConfigAt(target.kubeconfigPath),
    await crdFilesIn(fileURLToPath(new URL("../../crds", import.meta.url))),
  );
  targetClient = new KubeClient("rb-target", kubeConfigAt(target.kubeconfigPath));
  await makeRegion();
});

afterAll(async () => {
  for (const { type, obj } of [...made].reverse()) {
    const ref = {
      name: obj.metadata.name ?? "",
      ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    };
    if (obj.metadata.finalizers)
      await service.mergePatch(type, ref, { metadata: { finalizers: null } }).catch(() => undefined);
    await service.delete(type, ref).catch(() => undefined);
  }
  await service
    .mergePatch(HcpClusterResource, { name: "held", namespace: GOING }, { metadata: { finalizers: null } })
    .catch(() => undefined);
  if (sub)
    await service
      .mergePatch(
        HcpClusterResource,
        { name: "leaving", namespace: sub.name },
        { metadata: { finalizers: null } },
      )
      .catch(() => undefined);
  await sub?.remove();
  await ops?.remove();
  await target?.stop();
  await storage?.stop();
  await scratch?.remove();
});

/** The target's copy of a made object. */
async function restoredOf(
  type: ResourceType,
  obj: KubeObject,
  into = targetClient,
): Promise<KubeObject | undefined> {
  return into.find(type, obj.metadata.name ?? "", obj.metadata.namespace);
}

/** A restored cluster or pool writes its work again before it may go: the restore says so. */
function restoredFinalizers(type: ResourceType, obj: KubeObject): string[] | undefined {
  const awaitsWork = type.group === GROUP && ["HcpCluster", "NodePool"].includes(type.kind);
  return awaitsWork ? [...(obj.metadata.finalizers ?? []), RESTORED_WORK_FINALIZER] : obj.metadata.finalizers;
}

/** Every made object is in the target as it was, its owner references on the new owners' uids. */
async function expectRestored(into: KubeClient): Promise<void> {
  const newUid = new Map<string, string>();
  for (const { type, obj } of made) {
    const got = await restoredOf(type, obj, into);
    const where = `${type.kind} ${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    expect(got, where).toBeDefined();
    newUid.set(obj.metadata.uid ?? "", got!.metadata.uid ?? "");
    const annotations = { ...obj.metadata.annotations };
    // Every object of the region's own kinds is told the uid it was made with.
    if (type.group === GROUP) annotations[ORIGINAL_UID_ANNOTATION] = obj.metadata.uid ?? "";
    expect(got!.metadata.labels, where).toEqual(obj.metadata.labels);
    expect(got!.metadata.annotations ?? {}, where).toEqual(annotations);
    expect(got!.metadata.finalizers, where).toEqual(restoredFinalizers(type, obj));
    for (const field of ["spec", "status", "data", "type"])
      expect(got![field], `${where} ${field}`).toEqual(obj[field]);
  }
  for (const { type, obj } of made) {
    const got = (await restoredOf(type, obj, into))!;
    const want = (obj.metadata.ownerReferences ?? []).map((r) => ({ ...r, uid: newUid.get(r.uid) }));
    expect(got.metadata.ownerReferences, `${type.kind} ${obj.metadata.name} owners`).toEqual(
      want.length ? want : undefined,
    );
  }
}

describe("region backup and restore", () => {
  it("holds the controllers' own signing-key label", () => {
    expect(SIGNING_KEY_LABEL).toBe(CONTROLLER_SIGNING_KEY_LABEL);
  });

  it("backs the region up sealed, restores it into an empty service cluster after an interruption, and refuses a second one", async () => {
    const backup = await runHcpctl(
      "--kubeconfig",
      clusterInfo("service").kubeconfigPath,
      "region",
      "backup",
      ...storeFlags(),
    );
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(/^backup .*backups\/.*\.json\.gz\.enc: \d+ objects, \d+ bytes/);
    const blobs = storage.blobs().filter((b) => b.container === CONTAINER);
    expect(blobs.map((b) => b.name).sort()).toEqual([expect.stringMatching(/^backups\//), "latest"]);
    expect(blobs.find((b) => b.name !== "latest")!.body).not.toContain("demo-workers");

    // A first restore cut short after a few objects, as a crash would.
    const store = await openBackupStore({
      containerUrl: `${storage.blobServiceUrl}/${CONTAINER}`,
      storageCa: storage.caPath,
      anonymous: true,
    });
    const pointer = (await readPointer(store))!;
    const key = backupKey(Buffer.from((await readFile(keyPath, "utf8")).trim(), "base64"));
    const doc = openDocument((await store.read(pointer.latest))!, key);
    const cut = new AbortController();
    let done = 0;
    const interrupted = restoreRegion({
      client: targetClient,
      doc,
      source: pointer.latest,
      namespace: ops.name,
      signal: cut.signal,
      progress: () => void (++done >= 12 && cut.abort(new Error("interrupted"))),
    });
    await expect(interrupted).rejects.toThrow("interrupted");

    const restore = await runHcpctl(
      "--kubeconfig",
      target.kubeconfigPath,
      "region",
      "restore",
      "--from",
      "latest",
      ...storeFlags(),
    );
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    // The first run had created some objects; the second created the rest.
    const tally = [...restore.stdout.matchAll(/(\d+) created\s+(\d+) existed/g)];
    const sum = (i: 1 | 2) => tally.reduce((n, m) => n + Number(m[i]), 0);
    expect({ created: sum(1) > 0, existed: sum(2) > 0, total: sum(1) + sum(2) }).toEqual({
      created: true,
      existed: true,
      total: doc.objects.length,
    });
    expect(restore.stdout).toContain(
      `restored from the backup taken at ${doc.takenAt}: changes after ${doc.takenAt}`,
    );
    expect(restore.stdout).toMatch(/HcpCluster\s+\d+ created\s+\d+ existed/);

    await expectRestored(targetClient);
    expect(restore.stdout).toContain(
      `deleted again (its controller finishes it): HcpCluster ${sub.name}/leaving`,
    );
    const leaving = await targetClient.find(HcpClusterResource, "leaving", sub.name);
    expect(leaving?.metadata.deletionTimestamp).toBeTruthy();
    expect(leaving?.metadata.finalizers).toEqual(["hcp.aro.dev/region-backup-test"]);
    expect(await targetClient.find(SecretResource, "bg-1-kubeconfig", sub.name)).toBeUndefined();
    const ns = await targetClient.get(NamespaceResource, sub.name);
    expect(ns.metadata.labels?.[ARM_LABELS.subscription]).toBe("0000-sub");

    // Run again from the same backup: nothing is created twice.
    const again = await runHcpctl(
      "--kubeconfig",
      target.kubeconfigPath,
      "region",
      "restore",
      ...storeFlags(),
    );
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/HcpCluster\s+0 created/);

    // Another backup is refused: the cluster is no longer empty.
    const second = await runHcpctl(
      "--kubeconfig",
      clusterInfo("service").kubeconfigPath,
      "region",
      "backup",
      ...storeFlags(),
    );
    expect(second.code).toBe(0);
    const refused = await runHcpctl(
      "--kubeconfig",
      target.kubeconfigPath,
      "region",
      "restore",
      ...storeFlags(),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: restore refused: the service cluster is not empty \((ManagementCluster|HcpCluster) /,
    );
  });

  it("finishes a restore whose create failed mid-rank when run again: every object once, every status written", async () => {
    const store = await openBackupStore({
      containerUrl: `${storage.blobServiceUrl}/${CONTAINER}`,
      storageCa: storage.caPath,
      anonymous: true,
    });
    const key = backupKey(randomBytes(32));
    const taken = await takeBackup({ client: service, store, key, region: "local", namespace: ops.name });
    const doc = openDocument((await store.read(taken.blob))!, key);
    const fresh = await startApiServer({
      name: `rb-midrank-${process.pid}`,
      assetsDir: region().assetsDir,
      etcdUrl: region().etcdUrl,
      workDir: scratch.path,
    });
    try {
      const kc = kubeConfigAt(fresh.kubeconfigPath);
      await installCrds(kc, await crdFilesIn(fileURLToPath(new URL("../../crds", import.meta.url))));
      const client = new KubeClient("rb-midrank", kc);
      // The ExternalAuth shares its rank with the node pool and the rollout; the apiserver stores
      // it, and its answer is lost, as when the connection drops: no uid known, no status written.
      const failing = `${sub.name}/entra`;
      const ranks = restoreRanks(doc.objects);
      const at = ranks.findIndex((r) => r.some((o) => o.type === typeKey(ExternalAuthResource)));
      expect(ranks[at]!.length).toBeGreaterThan(2);
      const copyOf = (o: BackedUpObject) =>
        client.find(entryOfKey(o.type)!.type, o.object.metadata.name ?? "", o.object.metadata.namespace);
      class LosesAnAnswer extends KubeClient {
        override async create<T extends KubeObject>(
          t: ResourceType,
          obj: T,
          opts?: CreateOptions,
        ): Promise<T> {
          const created = await super.create(t, obj, opts);
          if (t.kind === "ExternalAuth" && `${obj.metadata.namespace}/${obj.metadata.name}` === failing)
            throw new KubeApiError(503, "ServiceUnavailable", "the connection dropped before the answer", {});
          return created;
        }
      }
      const cut = restoreRegion({
        client: new LosesAnAnswer("rb-midrank", kc),
        doc,
        source: taken.blob,
        namespace: ops.name,
      });
      await expect(cut).rejects.toThrow(RestoreFailedError);
      await expect(cut).rejects.toThrow(
        new RegExp(
          `^restoring ExternalAuth ${failing}: the connection dropped before the answer; \\d+ of ${doc.objects.length} objects are restored, the rest not: run the restore again`,
        ),
      );
      // What the rank had started finished, statuses written; nothing of a later rank began.
      const got = await client.get(ExternalAuthResource, "entra", sub.name);
      expect(got["status"]).toBeUndefined();
      let finished = 0;
      for (const o of ranks[at]!) {
        const there = await copyOf(o);
        if (!there || o.object.metadata.name === "entra" || !o.object["status"]) continue;
        expect(there["status"], `${o.type} ${o.object.metadata.name} status`).toEqual(o.object["status"]);
        finished++;
      }
      expect(finished).toBeGreaterThan(0);
      for (const o of ranks.slice(at + 1).flat())
        expect(await copyOf(o), `${o.type} ${o.object.metadata.name}`).toBeUndefined();
      expect(await client.find(MaintenanceRunResource, "run-demo", sub.name)).toBeUndefined();

      const summary = await restoreRegion({ client, doc, source: taken.blob, namespace: ops.name });
      const counts = Object.values(summary.counts);
      expect(counts.reduce((n, c) => n + c.created + c.existed, 0)).toBe(doc.objects.length);
      expect(summary.counts[typeKey(ExternalAuthResource)]).toEqual({ created: 0, existed: 1 });
      expect(summary.counts[typeKey(MaintenanceRunResource)]?.created).toBeGreaterThan(0);
      await expectRestored(client);
      // Every object of the backup once, each status written, not only those this test made.
      for (const o of doc.objects) {
        const entry = entryOfKey(o.type)!;
        const m = o.object.metadata;
        const list = await client.list(entry.type, m.namespace ? { namespace: m.namespace } : {});
        const named = list.items.filter((i) => i.metadata.name === m.name);
        expect(named, `${o.type} ${m.namespace ?? ""}/${m.name}`).toHaveLength(1);
        if (entry.status && o.object["status"])
          expect(named[0]!["status"], `${o.type} ${m.name} status`).toEqual(o.object["status"]);
      }
    } finally {
      await fresh.stop();
    }
  });

  it("refuses a backup read with another key, naming both keys", async () => {
    const other = join(scratch.path, "other.key");
    await writeFile(other, randomBytes(32));
    const flags = storeFlags();
    flags[flags.indexOf("--key") + 1] = other;
    const result = await runHcpctl("--kubeconfig", target.kubeconfigPath, "region", "restore", ...flags);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: .*backups\/.* was encrypted with key [0-9a-f]{16}; the key given is [0-9a-f]{16}\n$/,
    );
  });

  it("keeps the retention's newest backups, the pointer naming them, and reports each in its metrics", async () => {
    const store = await openBackupStore({
      containerUrl: `${storage.blobServiceUrl}/${CONTAINER}`,
      storageCa: storage.caPath,
      anonymous: true,
    });
    const registry = new Registry();
    const key = backupKey(Buffer.from((await readFile(keyPath, "utf8")).trim(), "base64"));
    const backup = new RegionBackup({
      client: service,
      store,
      key,
      region: "local",
      namespace: ops.name,
      intervalSeconds: 30,
      retention: 2,
      registry,
    });
    const taken = [];
    for (let i = 0; i < 3; i++) taken.push(await backup.once());
    const pointer = (await readPointer(store))!;
    expect(pointer.retained).toEqual([taken[2]!.blob, taken[1]!.blob]);
    expect(pointer.latest).toBe(taken[2]!.blob);
    const names = storage
      .blobs()
      .filter((b) => b.container === CONTAINER)
      .map((b) => b.name);
    expect(names).not.toContain(taken[0]!.blob);
    expect(names).toEqual(expect.arrayContaining(pointer.retained));
    expect(openDocument((await store.read(pointer.latest))!, key).intervalSeconds).toBe(30);
    const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]!.value;
    expect(await value("hcp_region_backup_bytes")).toBe(taken[2]!.bytes);
    expect(await value("hcp_region_backup_interval_seconds")).toBe(30);
    expect(await value("hcp_region_backup_last_success_timestamp_seconds")).toBeGreaterThan(
      Date.now() / 1000 - 60,
    );
    expect(await value("hcp_region_backup_failures_total")).toBe(0);

    // Running: a write the storage refuses is counted as a failure, and the loop goes on.
    const fault = storage.faults.add({
      method: "PUT",
      pathIncludes: "backups/",
      fault: { status: 503, code: "ServerBusy" },
    });
    const stop = new AbortController();
    const running = backup.start(stop.signal);
    await eventually(
      "a failed backup counted",
      async () => (await value("hcp_region_backup_failures_total")) === 1,
    );
    stop.abort();
    await running;
    fault.remove();
    expect((await readPointer(store))!.latest).toBe(taken[2]!.blob);
  });

  it("is taken by the operators' ServiceAccount with config/'s RBAC alone", async () => {
    await ensureNamespaceExists("service", "hcp-system");
    await kubectl(
      "service",
      "apply",
      "--server-side",
      "--force-conflicts",
      "-k",
      "config/bases/operators/rbac",
    );
    const operators = new KubeClient(
      "service",
      await serviceAccountKubeConfig("service", "hcp-system", "hcp-operators"),
    );
    const store = await openBackupStore({
      containerUrl: `${storage.blobServiceUrl}/${CONTAINER}`,
      storageCa: storage.caPath,
      anonymous: true,
    });
    const key = backupKey(randomBytes(32));
    const taken = await takeBackup({
      client: operators,
      store,
      key,
      region: "local",
      namespace: "hcp-system",
    });
    const doc = openDocument((await store.read(taken.blob))!, key);
    const held = doc.objects.map(
      (o) => `${o.type} ${o.object.metadata.namespace ?? ""}/${o.object.metadata.name}`,
    );
    expect(held).toEqual(
      expect.arrayContaining([
        `hcp.aro.dev/HcpCluster ${sub.name}/demo`,
        `/ConfigMap ${sub.name}/op-0123abcd`,
        `/Namespace /${sub.name}`,
        `hcp.aro.dev/Rollout /rb-ro-${suffix}`,
      ]),
    );
  });
});
