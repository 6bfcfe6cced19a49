/**
 * A region that loses its service cluster and is restored from its last backup (issue 34): the
 * region runs on a service apiserver of its own, three clusters become Ready (two with a node pool),
 * the region is backed up with hcpctl, a third cluster is created after the backup; then the
 * service apiserver is stopped for good and a new, empty one takes its place. hcpctl restores the
 * backup into it and the region's controllers start again against the same management clusters,
 * broker, Azure and storage. What was backed up comes back without anything made twice: the same
 * HostedClusters, namespaces and NodePools on the management clusters (same uids), the same Azure
 * resources, the same OIDC issuer keys, every cluster's work applied again, and no Ready going
 * False on the way. A cluster and a node pool deleted right after the restore, before their
 * controllers have written their works again, leave nothing behind. The cluster created
 * after the backup is not deleted by the restored region: its objects stay on the management
 * cluster and are reported as held by works the region does not know, until an SRE re-adopts it
 * (its spec again, with its ID); then the region deletes all three and nothing is left anywhere.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer, type ApiServer } from "../../hack/harness/apiserver.ts";
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { crdFilesIn, installCrds } from "../../hack/harness/crds.ts";
import { startStack, type Stack } from "../../hack/harness/stack.ts";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { NamespaceResource } from "../../operators/api/core.ts";
import {
  HostedClusterResource,
  NodePoolResource as HyperShiftNodePoolResource,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  ORIGINAL_UID_ANNOTATION,
  originalUid,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { AppliedManifestWorkResource } from "../../operators/maestro-agent/appliedwork.ts";
import { KubeClient, type KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, scratchDir } from "../support/fixtures.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { brokerCredentials, clusterInfo, kubeConfigAt, region } from "../support/region.ts";
import { sampleCluster, sampleFixedPool } from "../support/samples.ts";

const MANAGEMENT = ["mgmt-1", "mgmt-2"];
const CONTAINER = "region-backups";
const READY_MS = 120_000;
const suffix = `${process.pid % 100000}${Date.now().toString(36).slice(-3)}`;
const namespace = `hcp-restore-${suffix}`;
const customer = `restore-${suffix}`;

let scratch: Awaited<ReturnType<typeof scratchDir>>;
let arm: ArmEmulator;
let storage: StorageEmulator;
let backups: StorageEmulator;
let lost: ApiServer;
let restored: ApiServer | undefined;
let stack: Stack | undefined;
let keyPath: string;

const mgmt = (name: string): KubeClient => clientFor(name);

async function scratchSub(name: string): Promise<string> {
  const dir = join(scratch.path, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function serviceApiserver(name: string): Promise<{ server: ApiServer; client: KubeClient }> {
  const server = await startApiServer({
    name: `${name}-${suffix}`,
    assetsDir: region().assetsDir,
    etcdUrl: region().etcdUrl,
    workDir: scratch.path,
  });
  await installCrds(
    kubeConfigAt(server.kubeconfigPath),
    await crdFilesIn(fileURLToPath(new URL("../../crds", import.meta.url))),
  );
  return { server, client: new KubeClient(name, kubeConfigAt(server.kubeconfigPath)) };
}

function runStack(server: ApiServer): Promise<Stack> {
  return startStack({
    serviceKubeconfig: server.kubeconfigPath,
    management: MANAGEMENT.map((m) => ({ name: m, kubeconfigPath: clusterInfo(m).kubeconfigPath })),
    broker: { url: region().broker.url, credentials: brokerCredentials },
    arm,
    storage,
    namespace,
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
  });
}

const storeFlags = (): string[] => [
  "--container-url",
  `${backups.blobServiceUrl}/${CONTAINER}`,
  "--key",
  keyPath,
  "--namespace",
  namespace,
  "--storage-ca",
  backups.caPath,
  "--anonymous",
];

function newCluster(name: string): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name, namespace: customer };
  c.spec.dns.baseDomainPrefix = `${name}${suffix}`;
  c.spec.platform.azure.managedResourceGroup = `${customer}-${name}-managed`;
  c.spec.platform.azure.tenantId = randomUUID();
  delete c.spec.placement;
  return c;
}

const isReady = (c: HcpCluster | undefined): boolean =>
  c?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false;

async function waitReady(service: KubeClient, name: string): Promise<HcpCluster> {
  let found: HcpCluster | undefined;
  await eventually(
    `${name} Ready`,
    async () => isReady((found = await service.find<HcpCluster>(HcpClusterResource, name, customer))),
    READY_MS,
  ).catch((err: unknown) => {
    const said = (found?.status?.conditions ?? []).filter((c) => c.status !== "True");
    throw new Error(`${String(err)}; not True: ${JSON.stringify(said)}`);
  });
  return found!;
}

/** What a cluster is on its management cluster: uids of its namespaces, HostedCluster and NodePools. */
interface Placed {
  mgmt: string;
  id: string;
  objects: Record<string, string>;
}

async function placedObjects(c: HcpCluster): Promise<Placed> {
  const name = c.status?.managementCluster ?? "";
  const m = mgmt(name);
  const hosted = c.status?.hostedClusterNamespace ?? "";
  const objects: Record<string, string> = {};
  for (const ns of [hosted, `${hosted}-${c.spec.dns.baseDomainPrefix}`]) {
    const found = await m.find(NamespaceResource, ns);
    if (found) objects[`Namespace ${ns}`] = found.metadata.uid ?? "";
  }
  for (const type of [HostedClusterResource, HyperShiftNodePoolResource])
    for (const o of (await m.list<KubeObject>(type, { namespace: hosted })).items)
      objects[`${type.kind} ${o.metadata.name}`] = o.metadata.uid ?? "";
  return { mgmt: name, id: originalUid(c), objects };
}

/** The Azure resources tagged with a cluster's ID, by resource ID, as ARM describes them. */
function azureOf(id: string): Record<string, unknown> {
  const mine = arm.resources().filter((r) => Object.values(r.tags).includes(id));
  return Object.fromEntries(mine.map((r) => [r.id.toLowerCase(), { ...r, provisioningState: undefined }]));
}

/** The cluster's published JWKS, as stored in the issuer's storage account. */
function jwksOf(c: HcpCluster): string | undefined {
  return storage.blobs().find((b) => b.name.endsWith(`${originalUid(c)}/openid/v1/jwks`))?.body;
}

interface Before {
  cluster: HcpCluster;
  placed: Placed;
  azure: Record<string, unknown>;
  jwks: unknown;
}
const before = new Map<string, Before>();
let late: Placed;

beforeAll(async () => {
  scratch = await scratchDir("region-restore");
  arm = await startArmEmulator({ workDir: scratch.path, asyncDelayMs: 100 });
  storage = await startStorageEmulator({ workDir: scratch.path, verifyBearer: arm.verifyBearer });
  // The region's backups go to an account of their own (anonymous here, as hcpctl's --anonymous says).
  backups = await startStorageEmulator({
    workDir: await scratchSub("backups"),
    account: "hcpregionbackups",
    containers: [CONTAINER],
  });
  keyPath = join(scratch.path, "region-backup.key");
  await writeFile(keyPath, `${randomBytes(32).toString("base64")}\n`);
  lost = (await serviceApiserver("svc-lost")).server;
}, 180_000);

/** Whatever the test left on the shared management clusters (on a failure) goes with its namespaces. */
async function removeLeftovers(): Promise<void> {
  const ids = [...[...before.values()].map((b) => b.placed.id), ...(late ? [late.id] : [])];
  for (const m of MANAGEMENT)
    for (const ns of (await mgmt(m).list<KubeObject>(NamespaceResource)).items)
      if (ids.some((id) => ns.metadata.name?.includes(id)))
        await mgmt(m)
          .delete(NamespaceResource, { name: ns.metadata.name ?? "" })
          .catch(() => undefined);
}

afterAll(async () => {
  await stack?.stop();
  await removeLeftovers();
  for (const s of [restored, lost, storage, backups, arm]) await s?.stop();
  await scratch?.remove();
});

describe("a region restored after losing its service cluster", () => {
  it("adopts every backed-up cluster without making anything twice, and keeps what came after the backup", async () => {
    const lostClient = new KubeClient("svc-lost", kubeConfigAt(lost.kubeconfigPath));
    stack = await runStack(lost);
    await lostClient.create(NamespaceResource, { metadata: { name: customer } });
    for (const name of ["alpha", "beta", "delta"])
      await lostClient.create(HcpClusterResource, newCluster(name));
    for (const cluster of ["alpha", "beta"]) {
      const pool = sampleFixedPool();
      pool.metadata = { name: `${cluster}-workers`, namespace: customer };
      pool.spec.clusterRef = { name: cluster };
      await lostClient.create(NodePoolResource, pool);
    }
    for (const name of ["alpha", "beta", "delta"]) {
      const cluster = await waitReady(lostClient, name);
      before.set(name, {
        cluster,
        placed: await placedObjects(cluster),
        azure: azureOf(originalUid(cluster)),
        jwks: jwksOf(cluster),
      });
    }
    for (const cluster of ["alpha", "beta"]) {
      await eventually(
        `${cluster}'s node pool Ready`,
        async () =>
          (
            await lostClient.find<NodePool>(NodePoolResource, `${cluster}-workers`, customer)
          )?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
        READY_MS,
      );
      const b = before.get(cluster)!;
      b.cluster = await waitReady(lostClient, cluster);
      b.placed = await placedObjects(b.cluster);
      expect(Object.keys(b.placed.objects)).toContain(betaPool(cluster));
    }
    for (const b of before.values()) {
      expect(Object.keys(b.azure).length).toBeGreaterThan(0);
      expect(b.jwks).toContain('"kid"');
    }

    const backup = await runHcpctl("--kubeconfig", lost.kubeconfigPath, "region", "backup", ...storeFlags());
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);

    // After the backup: a cluster the restored region will not know.
    const gammaSpec = newCluster("gamma").spec;
    await lostClient.create(HcpClusterResource, { ...newCluster("gamma"), spec: gammaSpec });
    late = await placedObjects(await waitReady(lostClient, "gamma"));
    const lateWork = await lostClient.find<ManifestWork>(ManifestWorkResource, late.id, late.mgmt);
    expect(lateWork?.metadata.uid).toBeTruthy();

    // The service cluster is lost: its controllers and apiserver go, a new empty one comes.
    await stack.stop();
    stack = undefined;
    await lost.stop();
    const fresh = await serviceApiserver("svc-restored");
    restored = fresh.server;
    const service = fresh.client;
    const restore = await runHcpctl(
      "--kubeconfig",
      restored.kubeconfigPath,
      "region",
      "restore",
      "--from",
      "latest",
      ...storeFlags(),
    );
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    expect(await service.find(HcpClusterResource, "gamma", customer)).toBeUndefined();
    // Deleted before the controllers start again: nothing has written their works since the restore.
    await service.delete(HcpClusterResource, { name: "delta", namespace: customer });
    await service.delete(NodePoolResource, { name: "beta-workers", namespace: customer });
    const deltaPlaced = before.get("delta")!.placed;
    before.delete("delta");
    delete before.get("beta")!.placed.objects[betaPool("beta")];
    stack = await runStack(restored);

    // Every backed-up cluster's work is written again and applied by the agent at its generation.
    for (const [name, b] of before) {
      await eventually(
        `${name}'s work applied again`,
        async () => {
          const work = await service.find<ManifestWork>(ManifestWorkResource, b.placed.id, b.placed.mgmt);
          return (
            work?.status?.conditions?.some(
              (c) =>
                c.type === "Applied" &&
                c.status === "True" &&
                c.observedGeneration === work.metadata.generation,
            ) ?? false
          );
        },
        READY_MS,
      );
      const cluster = await waitReady(service, name);
      expect(readySince(cluster), `${name}'s Ready kept through the restore`).toBe(readySince(b.cluster));
      expect(originalUid(cluster)).toBe(b.placed.id);
      expect(await placedObjects(cluster), `${name} on ${b.placed.mgmt}`).toEqual(b.placed);
      expect(azureOf(b.placed.id), `${name}'s Azure resources`).toEqual(b.azure);
      expect(jwksOf(cluster), `${name}'s issuer keys`).toEqual(b.jwks);
    }

    // What was deleted right after the restore is gone from its management cluster and from Azure.
    await eventually(
      "delta deleted",
      async () => !(await service.find(HcpClusterResource, "delta", customer)),
      READY_MS,
    );
    expect((await placedObjects(lateCluster(deltaPlaced, "delta"))).objects).toEqual({});
    expect(azureOf(deltaPlaced.id)).toEqual({});
    expect(await appliedWorksOf(deltaPlaced)).toEqual([]);

    // The late cluster's control plane was not taken down, and the region says it holds works it does not know.
    const lateBefore = await placedObjects(lateCluster());
    expect(lateBefore.objects).toEqual(late.objects);
    await eventually(
      "the late cluster's work reported as unclaimed",
      async () => {
        const mc = await service.find<ManagementCluster>(ManagementClusterResource, late.mgmt);
        return mc?.status?.agent?.unclaimedWorks?.resourceIDs.includes(lateWork?.metadata.uid ?? "") ?? false;
      },
      READY_MS,
    );

    // An SRE re-adopts it: the same spec, its ID, placed where it runs. Nothing is made again.
    const readopted = { ...newCluster("gamma"), spec: structuredClone(gammaSpec) };
    readopted.metadata.annotations = { [ORIGINAL_UID_ANNOTATION]: late.id };
    readopted.spec.placement = {
      managementClusterSelector: { matchLabels: { "topology.kubernetes.io/zone": ZONES[late.mgmt] ?? "" } },
    };
    await service.create(HcpClusterResource, readopted);
    const gamma = await waitReady(service, "gamma");
    expect(await placedObjects(gamma)).toEqual(late);

    // Then the region deletes all three, and nothing of them is left anywhere.
    await service.delete(NodePoolResource, { name: "alpha-workers", namespace: customer });
    for (const name of ["alpha", "beta", "gamma"])
      await service.delete(HcpClusterResource, { name, namespace: customer });
    await eventually(
      "every cluster deleted",
      async () => (await service.list(HcpClusterResource, { namespace: customer })).items.length === 0,
      READY_MS,
    );
    for (const p of [...[...before.values()].map((b) => b.placed), late]) {
      expect((await placedObjects(lateCluster(p))).objects, `${p.id} on ${p.mgmt}`).toEqual({});
      expect(azureOf(p.id), `${p.id} in Azure`).toEqual({});
    }
  }, 600_000);
});

/** Where each management cluster is (config/samples). */
const ZONES: Record<string, string> = { "mgmt-1": "eastus-1", "mgmt-2": "eastus-2" };

/** The key placedObjects gives a cluster's node pool on its management cluster. */
const betaPool = (cluster: string): string => `NodePool ${cluster}${suffix}-${cluster}-workers`;

/** When Ready last changed: the same after a restore if it never went False on the way. */
const readySince = (c: HcpCluster): string | undefined =>
  c.status?.conditions?.find((x) => x.type === "Ready" && x.status === "True")?.lastTransitionTime;

/** The agent's records of the works it applied for a cluster (by the ManifestWork name each names). */
async function appliedWorksOf(p: Placed): Promise<string[]> {
  const records = await mgmt(p.mgmt).list<KubeObject>(AppliedManifestWorkResource);
  return records.items
    .filter((r) => JSON.stringify(r.metadata.annotations ?? {}).includes(p.id))
    .map((r) => r.metadata.name ?? "");
}

/** A cluster as a lost region knew it (by default the late one), enough for placedObjects. */
function lateCluster(p: Placed = late, named?: string): HcpCluster {
  const name = named ?? (p === late ? "gamma" : ([...before].find(([, b]) => b.placed === p)?.[0] ?? ""));
  const c = newCluster(name);
  c.metadata.annotations = { [ORIGINAL_UID_ANNOTATION]: p.id };
  c.status = { managementCluster: p.mgmt, hostedClusterNamespace: `ocm-local-${p.id}` };
  return c;
}
