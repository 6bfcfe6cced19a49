/**
 * `npm run bench -- --scenario region-backup [--n 10000] [--concurrency 50]
 * [--clusters-per-subscription 10] [--no-restore]`: the region backup at scale (issue 34).
 *
 * A fresh service apiserver is filled, by a raw client in parallel (no controller runs), with
 * what a region of N clusters holds: N HcpClusters with one NodePool each, statuses written and
 * the frontend's annotations on them; per cluster its signing keyring Secret in the operators'
 * namespace and one ARM operation ConfigMap (the operations of the last 7 days: one per cluster
 * assumed); a subscription namespace per `clusters-per-subscription` clusters; one
 * ManagementCluster per 2,000 clusters (two at least); the release catalog.
 *
 * Then takeBackup() writes it to the storage emulator: its time, bytes and objects, beside the
 * floor of reading what it holds (every selected list in pages of 500, the lists side by side),
 * with the time split into list, seal and upload. Then restoreRegion() of that document into an
 * empty apiserver (objects/s), beside the floor of creating the same objects (and writing their
 * statuses) with a raw client into another empty one, tier by tier (owners first) at the
 * scenario's concurrency: what the apiserver can take, which no restore goes below.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { mkdir, readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { load } from "js-yaml";
import { ConfigMapResource, NamespaceResource, SecretResource } from "../../operators/api/core.ts";
import {
  ARM_ANNOTATIONS,
  ARM_LABELS,
  CLUSTER_FINALIZER,
  HcpClusterResource,
  ManagementClusterResource,
  NODE_POOL_FINALIZER,
  NodePoolResource,
  type Condition,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import type { BlobCallOptions, BlobStore } from "../../operators/azure/blob.ts";
import { subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { takeBackup } from "../../operators/regionbackup/backup.ts";
import {
  backupKey,
  DocumentSealer,
  FORMAT_VERSION,
  openDocument,
  type BackedUpObject,
} from "../../operators/regionbackup/document.ts";
import { restorePlan, restoreRegion } from "../../operators/regionbackup/restore.ts";
import {
  entryOfKey,
  NAMESPACES,
  SELECTION,
  SIGNING_KEY_LABEL,
  stripServerSet,
  typeKey,
} from "../../operators/regionbackup/selection.ts";
import { openBackupStore } from "../../operators/regionbackup/store.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { startApiServer, type ApiServer } from "../harness/apiserver.ts";
import { crdFilesIn, installCrds } from "../harness/crds.ts";
import { repoCrdDir, startRegion, type Region } from "../harness/region.ts";
import { catalogConfigMap } from "../harness/stack.ts";
import { startStorageEmulator, type StorageEmulator } from "../harness/storage-emulator/index.ts";
import { compare, type Comparison, type Figure, type Scenario } from "./types.ts";
import { inParallel } from "./write-cost.ts";

const NAMESPACE = "hcp-system";
const CONTAINER = "region-backups";
const CLUSTERS_PER_MANAGEMENT_CLUSTER = 2000;
const samples = new URL("../../config/samples/", import.meta.url);

function kubeConfigAt(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

function progress(message: string): void {
  process.stderr.write(`[bench region-backup] ${new Date().toISOString()} ${message}\n`);
}

export interface RegionBackupOptions {
  n: number;
  /** Raw writes in flight while filling, and the parallel restore floor's. */
  concurrency: number;
  clustersPerSubscription: number;
  restore: boolean;
}

export interface RegionBackupReport {
  n: number;
  objects: number;
  fillMs: number;
  backup: {
    ms: number;
    bytes: number;
    objects: number;
    /** takeBackup's own record: from its start to the last list page sealed. */
    listAndSealMs: number;
    uploadMs: number;
    /** The same objects through a DocumentSealer, in memory: the sealing alone. */
    sealOnlyMs: number;
    /** Floor: every selected list in pages of 500, side by side, parsed. */
    listFloorMs: number;
  };
  restore?: {
    ms: number;
    objects: number;
    /** Raw creates (and status writes) of the same objects, tier by tier, at the scenario's concurrency. */
    floorMs: number;
  };
}

// ---- the region's objects ----------------------------------------------------------------------

async function sample<T>(file: string): Promise<T> {
  return load(await readFile(new URL(file, samples), "utf8")) as T;
}

const subscriptionOf = (i: number, perSubscription: number): string =>
  `00000000-0000-4000-8000-${Math.floor(i / perSubscription)
    .toString(16)
    .padStart(12, "0")}`;

const at = "2026-11-20T10:00:00Z";

function conditions(types: string[], generation: number): Condition[] {
  return types.map((type) => ({
    type,
    status: "True",
    reason: "AsExpected",
    message: `${type}: as expected`,
    lastTransitionTime: at,
    observedGeneration: generation,
  }));
}

/** A PEM of an RSA 2048 key's size, random: it compresses as a real key does (not at all). */
function keyringData(): Record<string, string> {
  const body = randomBytes(1190).toString("base64").replace(/.{64}/g, "$&\n");
  const pem = `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`;
  return { "key.pem": Buffer.from(pem).toString("base64") };
}

interface ClusterObjects {
  cluster: HcpCluster;
  pool: NodePool;
  keyring: KubeObject;
  operation: KubeObject;
}

/** What the frontend writes on a CR it made: its ARM identity and its create operation. */
function armAnnotations(
  resourceId: string,
  operationId: string,
  subscription: string,
): Record<string, string> {
  const doc = {
    id: operationId,
    request: "Create",
    resourceId,
    kind: "cluster",
    location: "eastus",
    apiVersion: "2024-06-10-preview",
    tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47",
    startTime: at,
    lastTransitionTime: at,
    endTime: at,
    status: "Succeeded",
  };
  return {
    [ARM_ANNOTATIONS.resourceId]: resourceId,
    [ARM_ANNOTATIONS.envelope]: JSON.stringify({
      tags: { env: "bench" },
      systemData: { createdBy: `user@${subscription}`, createdByType: "User", createdAt: at },
    }),
    [ARM_ANNOTATIONS.operation]: operationId,
    [ARM_ANNOTATIONS.operationRequest]: "Create",
    [ARM_ANNOTATIONS.operationHistory]: JSON.stringify([doc]),
    [ARM_ANNOTATIONS.correlationRequestId]: randomBytes(16).toString("hex"),
  };
}

function clusterObjects(
  i: number,
  opts: RegionBackupOptions,
  templates: { cluster: HcpCluster; pool: NodePool },
  mcs: number,
): ClusterObjects {
  const subscription = subscriptionOf(i, opts.clustersPerSubscription);
  const namespace = subscriptionNamespace(subscription);
  const name = `c${i}`;
  const group = `/subscriptions/${subscription}/resourceGroups/rg-${name}`;
  const clusterId = `${group}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;
  const clusterOp = randomBytes(16).toString("hex");
  const poolOp = randomBytes(16).toString("hex");
  const azure = JSON.parse(
    JSON.stringify(templates.cluster.spec.platform.azure).replaceAll(
      templates.cluster.spec.platform.azure.subscriptionId,
      subscription,
    ),
  ) as HcpCluster["spec"]["platform"]["azure"];
  const id = randomBytes(16).toString("hex");
  const cluster: HcpCluster = {
    ...templates.cluster,
    metadata: {
      name,
      namespace,
      finalizers: [CLUSTER_FINALIZER],
      labels: {
        [ARM_LABELS.resourceGroup]: id.slice(0, 16),
        [ARM_LABELS.operationKey]: clusterOp.slice(0, 8),
      },
      annotations: armAnnotations(clusterId, clusterOp, subscription),
    },
    spec: {
      ...templates.cluster.spec,
      dns: { baseDomainPrefix: name },
      platform: { azure: { ...azure, managedResourceGroup: `bench-${name}-managed` } },
    },
    status: {
      conditions: conditions(
        [
          "Ready",
          "Placed",
          "ResourceGroupReady",
          "DnsZoneReady",
          "DnsRecordsReady",
          "OidcIssuerReady",
          "HostedClusterApplied",
          "HostedClusterAvailable",
          "IngressReady",
          "Degraded",
        ],
        1,
      ),
      observedGeneration: 1,
      phase: "Ready",
      version: "4.19.7",
      desiredVersion: "4.19.7",
      apiURL: `https://api.${name}.x1y2.eastus.hcp.example.com:443`,
      consoleURL: `https://console-openshift-console.apps.${name}.x1y2.eastus.hcp.example.com`,
      issuerURL: `https://oidc.example.com/${id}`,
      managementCluster: `mgmt-${(i % mcs) + 1}`,
      clusterID: id,
      hostedClusterNamespace: `ocm-local-${id}`,
      azure: {
        dnsZone: {
          name: `${name}.x1y2.eastus.hcp.example.com`,
          nameServers: [1, 2, 3, 4].map((k) => `ns${k}-0${k}.azure-dns.example`),
        },
        apiIP: `20.${i % 250}.${(i >> 8) % 250}.1`,
        ingressIP: `20.${i % 250}.${(i >> 8) % 250}.2`,
      },
      serviceAccountSigningKey: {
        activeKeyId: id.slice(0, 20),
        publishedKeyIds: [id.slice(0, 20)],
        appliedKeyId: id.slice(0, 20),
      },
      workTemplate: { workRevision: 3, currentRevision: 3 },
      backup: { phase: "Enabled", paused: false, lastBackupTime: at },
    },
  };
  const pool: NodePool = {
    ...templates.pool,
    metadata: {
      name: `${name}-workers`,
      namespace,
      finalizers: [NODE_POOL_FINALIZER],
      labels: { [ARM_LABELS.cluster]: name, [ARM_LABELS.operationKey]: poolOp.slice(0, 8) },
      annotations: armAnnotations(`${clusterId}/nodePools/workers`, poolOp, subscription),
    },
    spec: { ...templates.pool.spec, clusterRef: { name } },
    status: {
      conditions: conditions(["Ready", "NodePoolApplied", "NodesReady", "Degraded"], 1),
      observedGeneration: 1,
      phase: "Ready",
      replicas: 2,
      readyReplicas: 2,
      version: "4.19.7",
    },
  };
  const keyring: KubeObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: `sa-signing-key-${id}`,
      namespace: NAMESPACE,
      labels: { [SIGNING_KEY_LABEL]: id },
      annotations: { "hcp.aro.dev/cluster": `${namespace}/${name}` },
    },
    type: "Opaque",
    data: keyringData(),
  };
  const operation: KubeObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `op-${clusterOp}`,
      namespace,
      labels: { [ARM_LABELS.operation]: "true", [ARM_LABELS.operationTarget]: name },
    },
    data: { "operation.json": cluster.metadata.annotations?.[ARM_ANNOTATIONS.operationHistory] ?? "" },
  };
  return { cluster, pool, keyring, operation };
}

function managementCluster(k: number, capacity: number): ManagementCluster {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "ManagementCluster",
    metadata: { name: `mgmt-${k + 1}` },
    spec: {
      consumerName: `mgmt-${k + 1}`,
      capacity: { maxHostedClusters: capacity },
      schedulable: true,
      region: "eastus",
      labels: { tier: "standard" },
    },
    status: {
      conditions: conditions(["Schedulable", "Connected"], 1),
      observedGeneration: 1,
      hostedClusters: capacity,
      phase: "Ready",
    },
  };
}

/** Creates the object, then writes its status when it has one (the apiserver drops it on create). */
async function createWithStatus(client: KubeClient, t: ResourceType, obj: KubeObject): Promise<void> {
  const created = await client.create(t, obj);
  const status = obj["status"];
  if (status && typeof status === "object" && Object.keys(status).length > 0)
    await client.replace(t, { ...created, status }, "status");
}

/** Fills an empty service apiserver with a region of N clusters; resolves the objects written. */
async function fill(client: KubeClient, opts: RegionBackupOptions): Promise<number> {
  const cluster = await sample<HcpCluster>("hcpcluster.yaml");
  delete cluster.spec.placement;
  const templates = { cluster, pool: await sample<NodePool>("nodepool-fixed.yaml") };
  const mcs = Math.max(2, Math.ceil(opts.n / CLUSTERS_PER_MANAGEMENT_CLUSTER));
  let objects = 0;
  await client.createIfAbsent(NamespaceResource, { metadata: { name: NAMESPACE } });
  await client.create(ConfigMapResource, await catalogConfigMap(NAMESPACE));
  objects += 2;
  for (let k = 0; k < mcs; k++)
    await createWithStatus(
      client,
      ManagementClusterResource,
      managementCluster(k, CLUSTERS_PER_MANAGEMENT_CLUSTER),
    );
  objects += mcs;
  const subscriptions = Math.ceil(opts.n / opts.clustersPerSubscription);
  await inParallel(subscriptions, opts.concurrency, async (s) => {
    const subscription = subscriptionOf(s * opts.clustersPerSubscription, opts.clustersPerSubscription);
    await client.create(NamespaceResource, {
      metadata: {
        name: subscriptionNamespace(subscription),
        labels: { [ARM_LABELS.subscription]: subscription, [ARM_LABELS.subscriptionState]: "Registered" },
        annotations: {
          [ARM_ANNOTATIONS.subscription]: JSON.stringify({
            state: "Registered",
            registrationDate: at,
            properties: { tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47" },
          }),
        },
      },
    });
  });
  objects += subscriptions;
  let done = 0;
  await inParallel(opts.n, opts.concurrency, async (i) => {
    const o = clusterObjects(i, opts, templates, mcs);
    await createWithStatus(client, HcpClusterResource, o.cluster);
    await createWithStatus(client, NodePoolResource, o.pool);
    await client.create(SecretResource, o.keyring);
    await client.create(ConfigMapResource, o.operation);
    if (++done % 1000 === 0) progress(`${done} clusters written`);
  });
  return objects + opts.n * 4;
}

// ---- measurements ------------------------------------------------------------------------------

/** A BlobStore that times its writes of backup bodies (not the small pointer). */
function timedStore(store: BlobStore): { store: BlobStore; uploadMs: () => number } {
  let uploadMs = 0;
  const timed: BlobStore = {
    location: store.location,
    read: (name: string, opts?: BlobCallOptions) => store.read(name, opts),
    remove: (name: string, opts?: BlobCallOptions) => store.remove(name, opts),
    async write(name: string, body: string, contentType: string, opts?: BlobCallOptions) {
      const started = performance.now();
      await store.write(name, body, contentType, opts);
      if (name.startsWith("backups/")) uploadMs += performance.now() - started;
    },
  };
  return { store: timed, uploadMs: () => uploadMs };
}

/**
 * The backup's floor: every list it makes (the selection and the subscription namespaces) in
 * pages of 500, side by side, parsed; resolves the time and what was read.
 */
async function listFloor(client: KubeClient): Promise<{ ms: number; held: BackedUpObject[] }> {
  const started = performance.now();
  const lists = await Promise.all(
    [...SELECTION, NAMESPACES].map(async (e) => {
      const namespace = e.operatorsNamespaceOnly ? NAMESPACE : undefined;
      if (e.name) {
        const found = await client.find(e.type, e.name, namespace);
        return { e, items: found ? [found] : [] };
      }
      const list = await client.listAll(e.type, {
        ...(namespace ? { namespace } : {}),
        ...(e.labelSelector ? { labelSelector: e.labelSelector } : {}),
      });
      return { e, items: list.items };
    }),
  );
  const ms = performance.now() - started;
  const held = lists.flatMap(({ e, items }) =>
    items.map((o) => ({
      type: typeKey(e.type),
      uid: o.metadata.uid ?? "",
      object: stripServerSet(o, e.type),
    })),
  );
  return { ms, held };
}

async function sealOnlyMs(held: BackedUpObject[], key: ReturnType<typeof backupKey>): Promise<number> {
  const started = performance.now();
  const sealer = new DocumentSealer(key, { formatVersion: FORMAT_VERSION, region: "bench", takenAt: at });
  for (const o of held) await sealer.add(o);
  await sealer.finish({ listDurationMs: 0, resourceVersions: {} });
  return performance.now() - started;
}

/** The restore's floor: each object created (and its status written) by a raw client, no checks. */
async function createFloorMs(
  client: KubeClient,
  objects: BackedUpObject[],
  concurrency: number,
): Promise<number> {
  const plan = restorePlan(objects);
  const started = performance.now();
  // Tier by tier, as owners come first; within a tier at `concurrency`.
  const tiers = [...new Set(plan.map((o) => entryOfKey(o.type)?.tier ?? 0))];
  for (const tier of tiers) {
    const these = plan.filter((o) => (entryOfKey(o.type)?.tier ?? 0) === tier);
    await inParallel(these.length, concurrency, async (i) => {
      const o = these[i]!;
      const entry = entryOfKey(o.type)!;
      // Owners are not mapped to new uids here: a floor does not check anything.
      const metadata = { ...o.object.metadata };
      delete metadata.ownerReferences;
      const { status, ...body }: KubeObject = { ...o.object, metadata };
      const created = await client.create<KubeObject>(entry.type, body);
      if (entry.status && status) await client.replace(entry.type, { ...created, status }, "status");
    });
  }
  return performance.now() - started;
}

// ---- the scenario -----------------------------------------------------------------------------

interface Apiservers {
  region: Region;
  extra: ApiServer[];
  storage?: StorageEmulator;
}

async function emptyApiserver(env: Apiservers, name: string): Promise<KubeClient> {
  const server = await startApiServer({
    name,
    assetsDir: env.region.assetsDir,
    etcdUrl: env.region.etcdUrl,
    workDir: env.region.workDir,
  });
  env.extra.push(server);
  await installCrds(kubeConfigAt(server.kubeconfigPath), await crdFilesIn(repoCrdDir));
  return new KubeClient(name, kubeConfigAt(server.kubeconfigPath));
}

export async function benchRegionBackup(opts: RegionBackupOptions): Promise<RegionBackupReport> {
  const region = await startRegion({ managementClusters: 0, broker: false });
  const env: Apiservers = { region, extra: [] };
  try {
    const service = new KubeClient(
      "service",
      kubeConfigAt(region.clusters.find((c) => c.role === "service")!.kubeconfigPath),
    );
    await mkdir(join(region.workDir, "region-backups"), { recursive: true });
    env.storage = await startStorageEmulator({
      workDir: join(region.workDir, "region-backups"),
      account: "hcpregionbackups",
      containers: [CONTAINER],
    });
    const blobs = await openBackupStore({
      containerUrl: `${env.storage.blobServiceUrl}/${CONTAINER}`,
      storageCa: env.storage.caPath,
      anonymous: true,
    });
    const key = backupKey(randomBytes(32));

    progress(`filling the service apiserver with ${opts.n} clusters`);
    const fillStarted = performance.now();
    const objects = await fill(service, opts);
    const fillMs = performance.now() - fillStarted;
    progress(`${objects} objects written in ${Math.round(fillMs)} ms`);

    const floor = await listFloor(service);
    progress(`list floor: ${floor.held.length} objects in ${Math.round(floor.ms)} ms`);
    const sealMs = await sealOnlyMs(floor.held, key);
    progress(`sealing alone: ${Math.round(sealMs)} ms`);

    const timed = timedStore(blobs);
    const started = performance.now();
    const taken = await takeBackup({
      client: service,
      store: timed.store,
      key,
      region: "bench",
      namespace: NAMESPACE,
    });
    const backupMs = performance.now() - started;
    progress(`backup: ${taken.objects} objects, ${taken.bytes} bytes in ${Math.round(backupMs)} ms`);
    const body = (await blobs.read(taken.blob)) ?? "";
    const doc = openDocument(body, key);
    const report: RegionBackupReport = {
      n: opts.n,
      objects,
      fillMs,
      backup: {
        ms: backupMs,
        bytes: taken.bytes,
        objects: taken.objects,
        listAndSealMs: doc.listDurationMs,
        uploadMs: timed.uploadMs(),
        sealOnlyMs: sealMs,
        listFloorMs: floor.ms,
      },
    };
    if (!opts.restore) return report;

    const target = await emptyApiserver(env, "restored");
    const restoreStarted = performance.now();
    await restoreRegion({ client: target, doc, source: taken.blob, namespace: NAMESPACE });
    const restoreMs = performance.now() - restoreStarted;
    progress(`restore: ${doc.objects.length} objects in ${Math.round(restoreMs)} ms`);
    const floorMs = await createFloorMs(await emptyApiserver(env, "floor"), doc.objects, opts.concurrency);
    progress(`restore floor at ${opts.concurrency}: ${Math.round(floorMs)} ms`);
    report.restore = {
      ms: restoreMs,
      objects: doc.objects.length,
      floorMs,
    };
    return report;
  } finally {
    await env.storage?.stop();
    await Promise.all(env.extra.map((s) => s.stop()));
    await region.stop();
  }
}

const seconds = (ms: number): number => Math.round(ms / 100) / 10;

function figures(r: RegionBackupReport, opts: RegionBackupOptions): Figure[] {
  const b = r.backup;
  const out: Figure[] = [
    {
      name: "region filled (raw client)",
      value: seconds(r.fillMs),
      unit: "s",
      detail: `${r.objects} objects for N=${r.n}, concurrency ${opts.concurrency}`,
    },
    {
      name: "backup: time",
      value: seconds(b.ms),
      unit: "s",
      detail: `target under 60 s at 10,000 clusters (this run ${r.n})`,
    },
    {
      name: "backup: size",
      value: Math.round((b.bytes / 2 ** 20) * 10) / 10,
      unit: "MB",
      detail: `${b.objects} objects, ${Math.round(b.bytes / r.n)} bytes per cluster sealed`,
    },
    {
      name: "backup: lists and sealing",
      value: seconds(b.listAndSealMs),
      unit: "s",
      detail: `interleaved, page by page; sealing alone ${seconds(b.sealOnlyMs)} s; lists alone ${seconds(b.listFloorMs)} s (the floor)`,
    },
    {
      name: "backup: upload",
      value: seconds(b.uploadMs),
      unit: "s",
      detail: "one blob write to the storage emulator",
    },
  ];
  if (r.restore)
    out.push({
      name: "restore: objects per second",
      value: Math.round(r.restore.objects / (r.restore.ms / 1000)),
      unit: "objects/s",
      detail: `${r.restore.objects} objects in ${seconds(r.restore.ms)} s into an empty apiserver`,
    });
  return out;
}

function comparisons(r: RegionBackupReport, opts: RegionBackupOptions): Comparison[] {
  const out = [
    compare({
      name: "backup",
      unit: "s",
      ours: seconds(r.backup.ms),
      against: "raw client lists every selected kind, pages of 500",
      peer: seconds(r.backup.listFloorMs),
    }),
  ];
  if (r.restore)
    out.push(
      compare({
        name: "restore",
        unit: "s",
        ours: seconds(r.restore.ms),
        against: `raw creates (+status) of the same objects, ${opts.concurrency} at once per tier`,
        peer: seconds(r.restore.floorMs),
      }),
    );
  return out;
}

function flag(argv: string[], name: string, fallback: number): number {
  const { values } = parseArgs({ args: argv, strict: false, options: { [name]: { type: "string" } } });
  const raw = values[name];
  const value = typeof raw === "string" ? Number(raw) : fallback;
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`--${name} must be a positive integer, not "${String(raw)}"`);
  return value;
}

export const regionBackupScenario: Scenario = {
  describe: "region backup and restore at scale (raw-client list and create floors)",
  async run({ n, argv }) {
    const opts: RegionBackupOptions = {
      n: n ?? 10_000,
      concurrency: flag(argv, "concurrency", 50),
      clustersPerSubscription: flag(argv, "clusters-per-subscription", 10),
      restore: !argv.includes("--no-restore"),
    };
    const report = await benchRegionBackup(opts);
    return { figures: figures(report, opts), comparisons: comparisons(report, opts), report };
  },
};
