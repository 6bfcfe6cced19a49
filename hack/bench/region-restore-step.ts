/**
 * The lifecycle scenario's `--restore` step (issue 34): a running region of N Ready clusters loses
 * its service cluster and is restored from a backup taken just before, the recipe of
 * test/e2e/region-restore.test.ts at scale. Backed up (takeBackup to a storage emulator), the
 * operators stopped and the service apiserver with them, a new empty one started with the CRDs,
 * restoreRegion into it, the deployment's own objects seeded as an install does (admission policy,
 * the management clusters' namespaces), the operators started against it. Measured: the restore,
 * and the time until every cluster's work is applied again at its generation, every HcpCluster
 * Ready and every cluster and pool reconciled; the writes the management apiservers served in
 * that window, by resource (a restored region adopts what runs: no HostedCluster, NodePool or
 * namespace is written).
 */
import { KubeConfig } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { takeBackup } from "../../operators/regionbackup/backup.ts";
import { backupKey, openDocument } from "../../operators/regionbackup/document.ts";
import { restoreRegion } from "../../operators/regionbackup/restore.ts";
import { openBackupStore } from "../../operators/regionbackup/store.ts";
import { Informer } from "../../operators/runtime/informer.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { startApiServer, type ApiServer } from "../harness/apiserver.ts";
import { crdFilesIn, installCrds } from "../harness/crds.ts";
import { waitFor } from "../harness/ports.ts";
import { repoCrdDir, type Region } from "../harness/region.ts";
import { startStorageEmulator } from "../harness/storage-emulator/index.ts";
import {
  difference,
  merge,
  requestCountsIn,
  storedWritesIn,
  unstoredWrites,
  type RequestCounts,
  type StoredWrites,
} from "./apiserver-metrics.ts";
import { cpuWindow } from "./usage.ts";

const CONTAINER = "region-backups";

export interface RestoreStepInput {
  region: Region;
  /** The service cluster as it runs now, and the management clusters. */
  service: KubeClient;
  management: KubeClient[];
  /** The operators' namespace. */
  namespace: string;
  n: number;
  /** Works on the service cluster before the loss: as many are to be applied again. */
  works: number;
  phaseTimeoutMs: number;
  /** Stops the operators process (the service apiserver goes after it). */
  stopOperators(): Promise<void>;
  /** Starts the operators against this service kubeconfig and waits for them to be ready. */
  startOperators(serviceKubeconfig: string): Promise<void>;
  /** What an install puts on a new service cluster besides the CRDs (admission, namespaces). */
  install(service: KubeClient): Promise<void>;
  /** CPU seconds so far by process (usage.ts cpuByProcess); the operators' under "operators". */
  cpu(): Promise<Record<string, number>>;
  /** Whether every cluster and pool was reconciled since the operators started. */
  resynced(): Promise<boolean>;
  progress(message: string): void;
}

export interface RestoreStepReport {
  backupMs: number;
  backupBytes: number;
  objects: number;
  /** restoreRegion into the empty apiserver, CRDs and install apart. */
  restoreMs: number;
  /** From the operators' start against the restored cluster to ready. */
  operatorsReadyMs: number;
  /** From the operators' start to every work applied at its generation, cluster Ready, object reconciled. */
  convergedMs: number;
  /** From the operators' stop (the loss) to converged, the new apiserver's start included. */
  totalMs: number;
  /** Writes the management apiservers served from the loss to converged, by "VERB resource". */
  managementWrites: Record<string, number>;
  /** Of those, by resource, the ones answered but not stored: they changed nothing. */
  managementUnchangedWrites: Record<string, number>;
  /** CPU seconds by process from the operators' start to converged: where the time goes. */
  cpu: Record<string, number>;
}

function clientAt(path: string, name: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return new KubeClient(name, kc);
}

/** One scrape of each management apiserver: its requests, and its writes answered and stored. */
async function managementReading(
  management: KubeClient[],
): Promise<{ counts: RequestCounts; stored: StoredWrites[] }> {
  const texts = await Promise.all(management.map((m) => m.text("/metrics")));
  return { counts: merge(...texts.map(requestCountsIn)), stored: texts.map(storedWritesIn) };
}

function informer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  signal: AbortSignal,
): Informer<T> {
  const i = new Informer<T>({ client, type });
  void i.run(signal);
  return i;
}

const applied = (w: ManifestWork): boolean =>
  w.status?.conditions?.some(
    (c) => c.type === "Applied" && c.status === "True" && c.observedGeneration === w.metadata.generation,
  ) ?? false;

const ready = (c: HcpCluster): boolean =>
  c.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false;

/**
 * Runs the step; resolves its figures, the restored service cluster's client and its apiserver
 * (the caller's from now on: it stops it).
 */
export async function restoreStep(
  input: RestoreStepInput,
): Promise<{ report: RestoreStepReport; service: KubeClient; server: ApiServer }> {
  const { region } = input;
  const progress = (message: string): void => input.progress(message);
  // A directory of its own: the emulator writes its CA under it, and the OIDC storage's is in the region's.
  await mkdir(join(region.workDir, "region-backups"), { recursive: true });
  const storage = await startStorageEmulator({
    workDir: join(region.workDir, "region-backups"),
    account: "hcpregionbackups",
    containers: [CONTAINER],
  });
  const stop = new AbortController();
  try {
    const store = await openBackupStore({
      containerUrl: `${storage.blobServiceUrl}/${CONTAINER}`,
      storageCa: storage.caPath,
      anonymous: true,
    });
    const key = backupKey(randomBytes(32));
    const backupStarted = performance.now();
    const taken = await takeBackup({
      client: input.service,
      store,
      key,
      region: "bench",
      namespace: input.namespace,
    });
    const backupMs = performance.now() - backupStarted;
    progress(`backup: ${taken.objects} objects, ${taken.bytes} bytes in ${Math.round(backupMs)} ms`);

    const m0 = await managementReading(input.management);
    const lost = performance.now();
    await input.stopOperators();
    await region.clusters.find((c) => c.role === "service")?.apiServer?.stop();
    const server = await startApiServer({
      name: "service-restored",
      assetsDir: region.assetsDir,
      etcdUrl: region.etcdUrl,
      workDir: region.workDir,
    });
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
    await installCrds(kc, await crdFilesIn(repoCrdDir));
    const service = clientAt(server.kubeconfigPath, "service");
    const doc = openDocument((await store.read(taken.blob)) ?? "", key);
    const restoreStarted = performance.now();
    await restoreRegion({ client: service, doc, source: taken.blob, namespace: input.namespace });
    const restoreMs = performance.now() - restoreStarted;
    progress(`restored ${doc.objects.length} objects in ${Math.round(restoreMs)} ms`);
    await input.install(service);

    const works = informer<ManifestWork>(service, ManifestWorkResource, stop.signal);
    const clusters = informer<HcpCluster>(service, HcpClusterResource, stop.signal);
    await Promise.all([works.waitForSync(), clusters.waitForSync()]);
    // The operators process is a new one, counted from zero.
    const cpu0 = await input.cpu();
    delete cpu0["operators"];
    const started = performance.now();
    await input.startOperators(server.kubeconfigPath);
    const operatorsReadyMs = performance.now() - started;
    let last = "";
    await waitFor(
      "the restored region converged",
      async () => {
        const a = works.list().filter(applied).length;
        const r = clusters.list().filter(ready).length;
        const resynced = await input.resynced();
        const state = `${a} of ${input.works} works applied, ${r} of ${input.n} clusters Ready, resynced ${resynced}`;
        if (state !== last) progress(`waiting: ${(last = state)}`);
        return a >= input.works && r >= input.n && resynced;
      },
      { timeoutMs: input.phaseTimeoutMs, intervalMs: 250 },
    );
    const converged = performance.now();
    const cpu = cpuWindow(cpu0, await input.cpu());
    const m1 = await managementReading(input.management);
    const writes = [...difference(m1.counts, m0.counts)].filter(
      ([k, v]) => v > 0 && !/^(GET|LIST|WATCH) /.test(k),
    );
    const report: RestoreStepReport = {
      backupMs,
      backupBytes: taken.bytes,
      objects: taken.objects,
      restoreMs,
      operatorsReadyMs,
      convergedMs: converged - started,
      totalMs: converged - lost,
      managementWrites: Object.fromEntries(writes.sort(([, a], [, b]) => b - a)),
      managementUnchangedWrites: Object.fromEntries(unstoredWrites(m1.stored, m0.stored)),
      cpu,
    };
    progress(`restore step: ${JSON.stringify(report)}`);
    return { report, service, server };
  } finally {
    stop.abort();
    await storage.stop();
  }
}
