/**
 * The HyperShift simulator reads Secrets, BackupStorageLocations and Backups from watch caches, as
 * HyperShift's operator and Velero do: a HostedCluster's reconciles and a Schedule's backups ask
 * the apiserver nothing of them, however many there are (issue 37: the lifecycle bench's management
 * apiservers served ~2 Secret GETs, 2.3 Backup LISTs, a location LIST and a credential GET per
 * cluster placed). Reads are counted on the simulator's own client.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFile } from "node:fs/promises";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  BackupResource,
  BackupStorageLocationResource,
  SCHEDULE_NAME_LABEL,
  ScheduleResource,
  VELERO_API_VERSION,
  VELERO_NAMESPACE,
  type Backup,
  type Schedule,
} from "../../operators/api/velero/v1/index.ts";
import { HyperShiftSimulator, SIMULATOR_NAME } from "../../hack/hypershift-simulator/controller.ts";
import {
  BACKUP_CONTAINER,
  PERIOD_OVERRIDE_ANNOTATION,
  backupObjectName,
  veleroInstall,
} from "../../hack/hypershift-simulator/velero.ts";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { SecretResource } from "../../operators/api/core.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, scratchDir, secretType, tempNamespace } from "../support/fixtures.ts";
import { hostedClusterFixture } from "../support/hypershift.ts";
import { queueAdds, reconciledSince } from "../support/metrics.ts";
import { kubeConfigFor } from "../support/region.ts";

const mgmt = clientFor("mgmt-1");

/** Counts the GETs and LISTs the client sends, by "<verb> <plural>" (a find is a GET). */
function countReads(client: KubeClient): Map<string, number> {
  const reads = new Map<string, number>();
  const count = (key: string): void => void reads.set(key, (reads.get(key) ?? 0) + 1);
  const get = client.get.bind(client);
  const list = client.list.bind(client);
  client.get = (...args: Parameters<KubeClient["get"]>) => {
    count(`GET ${args[0].plural}`);
    return get(...args);
  };
  client.list = (...args: Parameters<KubeClient["list"]>) => {
    count(`LIST ${args[0].plural}`);
    return list(...args);
  };
  return reads;
}

const registry = new ClusterRegistry();
const cluster = registry.add("mgmt-1", kubeConfigFor("mgmt-1"));
const reads = countReads(cluster.client);
const readsOf = (...keys: string[]): Record<string, number> =>
  Object.fromEntries(keys.map((k) => [k, reads.get(k) ?? 0]));
const stop = new AbortController();
let running: Promise<void> | undefined;

const unique = `reads-${process.pid}-${Date.now().toString(36)}`;
let storage: { emulator: StorageEmulator; remove(): Promise<void> } | undefined;

beforeAll(async () => {
  const simulator = new HyperShiftSimulator({ cluster, provisionDelayMs: 300, deleteDelayMs: 100 });
  running = simulator.start(stop.signal);
  await eventually("the simulator's caches synced", () => simulator.hasSynced());
});

afterAll(async () => {
  stop.abort();
  await running;
  registry.stopAll();
  // Velero's objects go once nothing makes Backups any more.
  await mgmt.delete(ScheduleResource, { name: unique, namespace: VELERO_NAMESPACE }).catch(() => false);
  const backups = await mgmt.listAll<Backup>(BackupResource, {
    namespace: VELERO_NAMESPACE,
    labelSelector: `${SCHEDULE_NAME_LABEL}=${unique}`,
  });
  for (const b of backups.items)
    await mgmt.delete(BackupResource, { name: b.metadata.name ?? "", namespace: VELERO_NAMESPACE });
  await mgmt
    .delete(BackupStorageLocationResource, { name: unique, namespace: VELERO_NAMESPACE })
    .catch(() => false);
  await mgmt.delete(SecretResource, { name: unique, namespace: VELERO_NAMESPACE }).catch(() => false);
  await storage?.remove();
});

describe("HyperShift's Secret reads", () => {
  const name = "kms";
  let ns: { name: string; remove(): Promise<void> };
  const queue = `${SIMULATOR_NAME}-hostedcluster-mgmt-1`;

  beforeAll(async () => {
    ns = await tempNamespace(mgmt, "reads");
  });
  afterAll(async () => {
    await mgmt.delete(HostedClusterResource, { name, namespace: ns.name }).catch(() => false);
    await eventually(
      "the HostedCluster gone",
      async () => !(await mgmt.find(HostedClusterResource, name, ns.name)),
    );
    await ns.remove();
  });

  it("a HostedCluster with an Azure KMS key gets its kubeconfig and key hash, and its reconciles GET no Secret", async () => {
    const hc = hostedClusterFixture(ns.name, name);
    hc.spec.secretEncryption = {
      type: "kms",
      kms: {
        provider: "Azure",
        azure: {
          activeKey: {
            keyVaultName: "kv-demo",
            keyName: "etcd",
            keyVersion: "0123456789abcdef0123456789abcdef",
          },
          kms: { credentialsSecretName: "kms-kms", objectEncoding: "utf-8" },
        },
      },
    };
    await mgmt.create(HostedClusterResource, hc);
    const condition = async (type: string) =>
      (await mgmt.get<HostedCluster>(HostedClusterResource, name, ns.name)).status?.conditions?.find(
        (c) => c.type === type,
      )?.status;
    await eventually("Available, its key taken", async () => {
      return (
        (await condition("Available")) === "True" &&
        (await condition("EtcdDataEncryptionUpToDate")) === "True"
      );
    });
    expect(await mgmt.find(secretType, `${name}-admin-kubeconfig`, ns.name)).toBeDefined();
    const listsBefore = readsOf("LIST secrets");
    // Counted from here: while the Secret watch is behind the creates (a loaded machine), a
    // reconcile may still read past it, as it must; once caught up, a reconcile reads none.
    const getsBefore = readsOf("GET secrets")["GET secrets"] ?? 0;
    // Each touch is a reconcile that computes the status, the key hash with it.
    for (let i = 0; i < 5; i++) {
      const addsBefore = await queueAdds(queue);
      await mgmt.mergePatch(
        HostedClusterResource,
        { name, namespace: ns.name },
        { metadata: { annotations: { "hcp.aro.dev/test-touch": String(i) } } },
      );
      await eventually(`touch ${i} reconciled`, reconciledSince(queue, addsBefore));
    }
    expect((readsOf("GET secrets")["GET secrets"] ?? 0) - getsBefore).toBe(0);
    expect(readsOf("LIST secrets")).toEqual(listsBefore);
    expect(await condition("EtcdDataEncryptionUpToDate")).toBe("True");
  });
});

describe("Velero's reads", () => {
  const completed = async (): Promise<string[]> =>
    (
      await mgmt.listAll<Backup>(BackupResource, {
        namespace: VELERO_NAMESPACE,
        labelSelector: `${SCHEDULE_NAME_LABEL}=${unique}`,
      })
    ).items
      .filter((b) => b.status?.phase === "Completed")
      .map((b) => b.metadata.name ?? "");

  beforeAll(async () => {
    const scratch = await scratchDir(unique);
    const emulator = await startStorageEmulator({
      workDir: scratch.path,
      account: "hcpreadslocal",
      containers: [BACKUP_CONTAINER],
    });
    storage = {
      emulator,
      remove: async () => {
        await emulator.stop();
        await scratch.remove();
      },
    };
    // The emulator asks for no token: a credentials file without a client secret gives none.
    const { location, credentials } = veleroInstall({
      blobServiceUrl: emulator.blobServiceUrl,
      storageCaPem: await readFile(emulator.caPath, "utf8"),
      azure: { tenantId: "t", clientId: "c", clientSecret: "", authorityHost: "", caPath: "" },
    });
    credentials.metadata.name = unique;
    location.metadata.name = unique;
    location.spec.default = false;
    location.spec.credential = { name: unique, key: location.spec.credential?.key ?? "" };
    await mgmt.create(SecretResource, credentials);
    await mgmt.create(BackupStorageLocationResource, location);
  });

  it("a Schedule's backups, every one stored, LIST no Backup or location and GET no credential", async () => {
    const schedule: Schedule = {
      apiVersion: VELERO_API_VERSION,
      kind: "Schedule",
      metadata: {
        name: unique,
        namespace: VELERO_NAMESPACE,
        // A second apart: Backup names are to the second, and a name taken twice is a 409 and a GET.
        annotations: { [PERIOD_OVERRIDE_ANNOTATION]: "1000" },
      },
      spec: { schedule: "0 3 * * *", template: { storageLocation: unique, ttl: "1h0m0s" } },
    };
    await mgmt.create(ScheduleResource, schedule);
    await eventually("two backups", async () => (await completed()).length >= 2);
    const keys = ["LIST backups", "LIST backupstoragelocations", "GET secrets", "GET backups"];
    const before = readsOf(...keys);
    const taken = (await completed()).length;
    await eventually("three backups more", async () => (await completed()).length >= taken + 3);
    expect(readsOf(...keys)).toEqual(before);
    const stored = new Set(storage?.emulator.blobs().map((b) => b.name));
    for (const backup of await completed()) expect(stored).toContain(backupObjectName(backup));
  });
});
