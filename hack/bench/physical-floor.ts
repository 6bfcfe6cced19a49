/**
 * The lifecycle's physical floor: the fewest writes this design needs to create and to delete one
 * hosted cluster with its node pool, replayed N times by a raw client on the same apiservers, at
 * the same concurrency, in the same run. Each write is a copy of the real object the run itself
 * wrote for its first cluster (its kind, its bytes, its schema and CEL rules, its admission), read
 * at Ready. The list is the design's, not our counts: writing less than today lowers our figure and
 * leaves this one where it is. docs/performance.md ("The physical floor") says why each write is
 * needed; PHYSICAL_WRITES below is that list as the replay makes it.
 *
 * The region's own processes are stopped while it runs: the copies are real HcpClusters,
 * ManifestWorks and HostedClusters that the operators, agents and simulators would otherwise act
 * on. Each management cluster's kube-controller-manager keeps running: its garbage and namespace
 * controllers are part of the design. Service and management writes of one cluster go at once, not
 * one side after the other as the real causal chain must: the floor is a lower bound.
 */
import { ConfigMapResource, NamespaceResource, SecretResource } from "../../operators/api/core.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  WORK_LABELS,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import {
  HostedClusterResource,
  NodePoolResource as HyperShiftNodePoolResource,
  controlPlaneNamespaceName,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { AppliedManifestWorkResource } from "../../operators/maestro-agent/appliedwork.ts";
import { RestMapper } from "../../operators/maestro-agent/restmapper.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { waitFor } from "../harness/ports.ts";
import { inParallel } from "./write-cost.ts";

/** Each write of one cluster's create and deletion, by side, as the replay makes it. */
export const PHYSICAL_WRITES = {
  create: {
    service: [
      "POST hcpclusters (the user's create; the finalizer added at admission)",
      "POST nodepools (the user's create)",
      "APPLY hcpclusters/status ×2 (Provisioning, Ready)",
      "APPLY nodepools/status ×2 (Provisioning, Ready)",
      "POST secrets (the service-account signing key)",
      "POST manifestworks per work (the HostedCluster's, the NodePool's; the transport's finalizer in the create)",
      "APPLY manifestworks/status per work, once (the agent's report with its feedback)",
    ],
    management: [
      "POST each manifest of the works (Namespace, HostedCluster, NodePool, Secrets)",
      "POST appliedmanifestworks per work and APPLY its status once (the uids applied)",
      "PATCH hostedclusters, nodepools (HyperShift's finalizers)",
      "POST namespaces (the control plane's), POST its Secrets and ConfigMaps (HyperShift's)",
      "APPLY hostedclusters/status, nodepools/status once each (HyperShift's Ready)",
    ],
  },
  delete: {
    service: [
      "DELETE hcpclusters, nodepools, manifestworks, each with its finalizer PATCHed off",
      "DELETE secrets (the signing key)",
    ],
    management: [
      "DELETE hostedclusters, nodepools, each with HyperShift's finalizer PATCHed off",
      "DELETE appliedmanifestworks per work",
      "DELETE namespaces ×2 (the namespace controller sweeps what is left in them)",
    ],
  },
} as const;

/** One cluster's objects as the run wrote them, read at Ready. */
export interface PhysicalSet {
  cluster: HcpCluster;
  pool: NodePool;
  works: ManifestWork[];
  signingKey: KubeObject;
  /** The management cluster the sample was placed on (only to read from; copies spread over all). */
  placedOn: string;
  /** The namespace the works' manifests live in on the management cluster. */
  hostedNamespace: string;
  /** Each work's manifests, in order, the Namespace first, with their types from discovery. */
  manifests: Typed[];
  records: KubeObject[];
  hostedCluster: KubeObject;
  hostedNodePool: KubeObject;
  /** What HyperShift wrote in the control plane's namespace (not the controller-manager's). */
  controlPlane: Typed[];
}

/** An object with the REST type it is written through. */
export interface Typed {
  object: KubeObject;
  type: ResourceType;
}

type Status = { conditions?: Array<{ message?: string }> } & Record<string, unknown>;

const FIELD_MANAGER = "bench-physical-floor";

/** The object without what the apiserver assigns, as a creator sends it. */
function bare(o: KubeObject, keep: { finalizers?: boolean } = {}): KubeObject {
  const rest: KubeObject & { status?: unknown } = { ...o };
  delete rest.status;
  const { name, namespace, labels, annotations, finalizers } = o.metadata;
  return {
    ...rest,
    metadata: {
      ...(name !== undefined && { name }),
      ...(namespace !== undefined && { namespace }),
      ...(labels && { labels }),
      ...(annotations && { annotations }),
      ...(keep.finalizers && finalizers && { finalizers }),
    },
  };
}

/** A status with one condition's message changed: the first of two writes, as big as the last. */
function provisioning(status: Status): Status {
  const [first, ...rest] = status.conditions ?? [];
  return first
    ? { ...status, conditions: [{ ...first, message: `${first.message ?? ""} …` }, ...rest] }
    : status;
}

type ServiceSide = Pick<PhysicalSet, "cluster" | "pool" | "works" | "signingKey">;
type ManagementSide = Omit<PhysicalSet, keyof ServiceSide>;

/** Reads the first cluster's objects (`<namespace>/<name>`, pool `<name>-workers`) from the region. */
export async function capturePhysicalSet(
  service: KubeClient,
  management: KubeClient[],
  ref: { namespace: string; name: string; signingKeyNamespace: string },
): Promise<PhysicalSet> {
  const cluster = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
  const pool = await service.get<NodePool>(NodePoolResource, `${ref.name}-workers`, ref.namespace);
  const selector = `${WORK_LABELS.clusterName}=${ref.name},${WORK_LABELS.clusterNamespace}=${ref.namespace}`;
  const works = (await service.list<ManifestWork>(ManifestWorkResource, { labelSelector: selector })).items;
  if (works.length === 0) throw new Error(`physical floor: ${ref.namespace}/${ref.name} has no works`);
  const signingKey = await service.get<KubeObject>(
    SecretResource,
    `sa-signing-key-${cluster.metadata.uid ?? ""}`,
    ref.signingKeyNamespace,
  );
  const serviceSide = { cluster, pool, works, signingKey };
  for (const client of management) {
    const side = await captureManagementSide(client, works);
    if (side) return { ...serviceSide, ...side };
  }
  throw new Error(`physical floor: no management cluster holds ${ref.namespace}/${ref.name}'s HostedCluster`);
}

/** The management side of the works' cluster, when `client` is the cluster they were placed on. */
async function captureManagementSide(
  client: KubeClient,
  works: ManifestWork[],
): Promise<ManagementSide | undefined> {
  const manifests = works.flatMap((w) => (w.spec?.workload?.manifests ?? []) as KubeObject[]);
  const kindOf = (m: KubeObject): string | undefined => (m as { kind?: string }).kind;
  const hosted = manifests.find((m) => kindOf(m) === "HostedCluster");
  const hostedPool = manifests.find((m) => kindOf(m) === "NodePool");
  if (!hosted || !hostedPool) throw new Error("physical floor: the works hold no HostedCluster or NodePool");
  const hostedNamespace = hosted.metadata.namespace ?? "";
  const hostedName = hosted.metadata.name ?? "";
  const hostedCluster = await client.find<KubeObject>(HostedClusterResource, hostedName, hostedNamespace);
  if (!hostedCluster) return undefined;
  const hostedNodePool = await client.get<KubeObject>(
    HyperShiftNodePoolResource,
    hostedPool.metadata.name ?? "",
    hostedNamespace,
  );
  const workNames = new Set(works.map((w) => `${w.metadata.namespace}/${w.metadata.name}`));
  const records = (await client.list<KubeObject>(AppliedManifestWorkResource, {})).items.filter((r) =>
    workNames.has(r.metadata.annotations?.["hcp.aro.dev/manifestwork"] ?? ""),
  );
  const cp = controlPlaneNamespaceName(hostedNamespace, hostedName);
  const byHyperShift = (o: KubeObject): boolean => o.metadata.name !== "kube-root-ca.crt";
  const controlPlane: Typed[] = [
    ...(await client.list<KubeObject>(SecretResource, { namespace: cp })).items
      .filter(byHyperShift)
      .map((object) => ({ object, type: SecretResource })),
    ...(await client.list<KubeObject>(ConfigMapResource, { namespace: cp })).items
      .filter(byHyperShift)
      .map((object) => ({ object, type: ConfigMapResource })),
  ];
  const mapper = new RestMapper(client);
  const typed: Typed[] = [];
  for (const object of manifests) {
    const { apiVersion = "", kind = "" } = object as { apiVersion?: string; kind?: string };
    typed.push({ object, type: await mapper.map(apiVersion, kind) });
  }
  return {
    placedOn: client.cluster,
    hostedNamespace,
    manifests: [
      ...typed.filter((m) => m.type.kind === "Namespace"),
      ...typed.filter((m) => m.type.kind !== "Namespace"),
    ],
    records,
    hostedCluster,
    hostedNodePool,
    controlPlane,
  };
}

/** The names the i-th copy uses. */
function names(set: PhysicalSet, i: number) {
  const hostedNamespace = `pfm-${i}`;
  const hostedName = set.hostedCluster.metadata.name ?? "";
  return {
    serviceNamespace: `pf-${Math.floor(i / 100)}`,
    cluster: `pf${i}`,
    pool: `pf${i}-workers`,
    work: (w: KubeObject) => `${w.metadata.name}-pf${i}`,
    signingKey: `sa-signing-key-pf${i}`,
    place: {
      hosted: hostedNamespace,
      controlPlane: controlPlaneNamespaceName(hostedNamespace, hostedName),
      suffix: `pf${i}`,
    },
    record: (r: KubeObject) => `pf${i}-${r.metadata.name}`.slice(0, 253),
  };
}

/** Rewrites a manifest of the sample into the i-th copy's namespaces. */
export function moved(set: PhysicalSet, o: KubeObject, to: CopyPlace): KubeObject {
  const sampleCp = sampleControlPlane(set);
  const rename = (ns: string | undefined): string | undefined =>
    ns === set.hostedNamespace ? to.hosted : ns === sampleCp ? to.controlPlane : ns;
  const b = bare(o);
  const kind = (o as { kind?: string }).kind;
  if (kind === "Namespace") return { ...b, metadata: { ...b.metadata, name: rename(b.metadata.name) } };
  if (!outside(set, o)) return { ...b, metadata: { ...b.metadata, namespace: rename(b.metadata.namespace) } };
  // Elsewhere (another namespace, or cluster-scoped), the copies keep apart by name.
  return { ...b, metadata: { ...b.metadata, name: `${b.metadata.name ?? ""}-${to.suffix}` } };
}

/** Where the i-th copy's management objects go: its two namespaces, and a suffix for the rest. */
export interface CopyPlace {
  hosted: string;
  controlPlane: string;
  suffix: string;
}

/** Whether a sample's object lives outside the cluster's two namespaces (and is no Namespace). */
function outside(set: PhysicalSet, o: KubeObject): boolean {
  const ns = o.metadata.namespace;
  return (
    (o as { kind?: string }).kind !== "Namespace" &&
    ns !== set.hostedNamespace &&
    ns !== sampleControlPlane(set)
  );
}

/** The sample's control-plane namespace, as HyperShift names it. */
function sampleControlPlane(set: PhysicalSet): string {
  return controlPlaneNamespaceName(set.hostedNamespace, set.hostedCluster.metadata.name ?? "");
}

/** The namespaces the copies need beforehand (not timed: the bench's own clusters' exist too). */
export async function preparePhysicalFloor(service: KubeClient, n: number): Promise<void> {
  for (let k = 0; k * 100 < n; k++)
    await service.createIfAbsent(NamespaceResource, { metadata: { name: `pf-${k}` } });
}

/** Counts the writes the replay makes, per side, so the figure is what was replayed. */
export interface WriteTally {
  service: number;
  management: number;
}

/** The i-th copy of the set, with the clients it is written through and the tally it counts into. */
interface Copy {
  set: PhysicalSet;
  i: number;
  service: KubeClient;
  mgmt: KubeClient;
  tally: WriteTally;
}

/** The i-th copy's create: the service side and its management cluster's side at once. */
async function createCopy({ set, i, service, mgmt, tally }: Copy): Promise<void> {
  const n = names(set, i);
  const s = async <T>(write: Promise<T>): Promise<T> => {
    const out = await write;
    tally.service++;
    return out;
  };
  const m = async <T>(write: Promise<T>): Promise<T> => {
    const out = await write;
    tally.management++;
    return out;
  };
  const serviceSide = async (): Promise<void> => {
    const sample = bare(set.cluster) as HcpCluster;
    const cluster = await s(
      service.create<HcpCluster>(HcpClusterResource, {
        ...sample,
        metadata: { ...sample.metadata, name: n.cluster, namespace: n.serviceNamespace },
        spec: {
          ...sample.spec,
          dns: { ...sample.spec.dns, baseDomainPrefix: n.cluster },
          platform: {
            azure: { ...sample.spec.platform.azure, managedResourceGroup: `${n.cluster}-managed` },
          },
        },
      }),
    );
    const pool = bare(set.pool) as NodePool;
    await s(
      service.create(NodePoolResource, {
        ...pool,
        metadata: { ...pool.metadata, name: n.pool, namespace: n.serviceNamespace },
        spec: { ...pool.spec, clusterRef: { name: n.cluster } },
      }),
    );
    const clusterRef = { metadata: { name: n.cluster, namespace: n.serviceNamespace } };
    const poolRef = { metadata: { name: n.pool, namespace: n.serviceNamespace } };
    const status = { subresource: "status" as const, fieldManager: FIELD_MANAGER };
    await s(
      service.apply(
        HcpClusterResource,
        { ...clusterRef, status: provisioning(set.cluster.status as Status) },
        status,
      ),
    );
    const key = bare(set.signingKey);
    await s(service.create(SecretResource, { ...key, metadata: { ...key.metadata, name: n.signingKey } }));
    for (const w of set.works) {
      const b = bare(w, { finalizers: true });
      await s(
        service.create(ManifestWorkResource, {
          ...b,
          metadata: {
            ...b.metadata,
            name: n.work(w),
            labels: {
              ...b.metadata.labels,
              [WORK_LABELS.clusterName]: n.cluster,
              [WORK_LABELS.clusterNamespace]: n.serviceNamespace,
              [WORK_LABELS.clusterUid]: cluster.metadata.uid ?? "",
            },
          },
        }),
      );
    }
    await s(
      service.apply(
        NodePoolResource,
        { ...poolRef, status: provisioning(set.pool.status as Status) },
        status,
      ),
    );
    for (const w of set.works)
      await s(
        service.apply(
          ManifestWorkResource,
          { metadata: { name: n.work(w), namespace: w.metadata.namespace }, status: w.status },
          status,
        ),
      );
    await s(service.apply(HcpClusterResource, { ...clusterRef, status: set.cluster.status }, status));
    await s(service.apply(NodePoolResource, { ...poolRef, status: set.pool.status }, status));
  };
  const managementSide = async (): Promise<void> => {
    const to = n.place;
    for (const { object, type } of set.manifests) await m(mgmt.create(type, moved(set, object, to)));
    for (const r of set.records) {
      const b = bare(r, { finalizers: true });
      await m(
        mgmt.create(AppliedManifestWorkResource, { ...b, metadata: { ...b.metadata, name: n.record(r) } }),
      );
      await m(
        mgmt.apply(
          AppliedManifestWorkResource,
          { metadata: { name: n.record(r) }, status: (r as { status?: unknown }).status },
          { subresource: "status", fieldManager: FIELD_MANAGER },
        ),
      );
    }
    const hc = { name: set.hostedCluster.metadata.name ?? "", namespace: n.place.hosted };
    const np = { name: set.hostedNodePool.metadata.name ?? "", namespace: n.place.hosted };
    await m(
      mgmt.mergePatch(HostedClusterResource, hc, {
        metadata: { finalizers: set.hostedCluster.metadata.finalizers },
      }),
    );
    await m(
      mgmt.mergePatch(HyperShiftNodePoolResource, np, {
        metadata: { finalizers: set.hostedNodePool.metadata.finalizers },
      }),
    );
    await m(mgmt.create(NamespaceResource, { metadata: { name: n.place.controlPlane } }));
    for (const { object, type } of set.controlPlane) await m(mgmt.create(type, moved(set, object, to)));
    const status = { subresource: "status" as const, fieldManager: FIELD_MANAGER };
    const hcStatus = (set.hostedCluster as { status?: unknown }).status;
    const npStatus = (set.hostedNodePool as { status?: unknown }).status;
    await m(mgmt.apply(HostedClusterResource, { metadata: hc, status: hcStatus }, status));
    await m(mgmt.apply(HyperShiftNodePoolResource, { metadata: np, status: npStatus }, status));
  };
  await Promise.all([serviceSide(), managementSide()]);
}

/** DELETE, then the finalizers PATCHed off as their controllers do once their cleanup is done. */
async function deleteFinalized(
  client: KubeClient,
  type: ResourceType,
  ref: { name: string; namespace?: string },
  count: () => void,
): Promise<void> {
  await client.delete(type, ref);
  count();
  await client.mergePatch(type, ref, { metadata: { finalizers: null } });
  count();
}

async function deleteCopy({ set, i, service, mgmt, tally }: Copy): Promise<void> {
  const n = names(set, i);
  const s = (): void => void tally.service++;
  const m = (): void => void tally.management++;
  const serviceSide = async (): Promise<void> => {
    await deleteFinalized(service, HcpClusterResource, { name: n.cluster, namespace: n.serviceNamespace }, s);
    await deleteFinalized(service, NodePoolResource, { name: n.pool, namespace: n.serviceNamespace }, s);
    for (const w of set.works)
      await deleteFinalized(
        service,
        ManifestWorkResource,
        { name: n.work(w), namespace: w.metadata.namespace },
        s,
      );
    await service.delete(SecretResource, {
      name: n.signingKey,
      namespace: set.signingKey.metadata.namespace,
    });
    s();
  };
  const managementSide = async (): Promise<void> => {
    const hc = { name: set.hostedCluster.metadata.name ?? "", namespace: n.place.hosted };
    const np = { name: set.hostedNodePool.metadata.name ?? "", namespace: n.place.hosted };
    await deleteFinalized(mgmt, HyperShiftNodePoolResource, np, m);
    await deleteFinalized(mgmt, HostedClusterResource, hc, m);
    for (const r of set.records) {
      await mgmt.delete(AppliedManifestWorkResource, { name: n.record(r) });
      m();
    }
    // What the namespaces' sweep does not take, the agent deletes itself.
    for (const { object, type } of set.manifests.filter((x) => outside(set, x.object))) {
      const copy = moved(set, object, n.place);
      await mgmt.delete(type, { name: copy.metadata.name ?? "", namespace: copy.metadata.namespace });
      m();
    }
    for (const name of [n.place.controlPlane, n.place.hosted]) {
      await mgmt.delete(NamespaceResource, { name });
      m();
    }
  };
  await Promise.all([serviceSide(), managementSide()]);
}

export interface PhysicalFloorRun {
  ms: number;
  writesPerCluster: WriteTally;
}

/** The n copies' creates (or deletions), `concurrency` clusters at once, copy i on management cluster i mod M. */
export async function replayPhysical(
  what: "create" | "delete",
  set: PhysicalSet,
  clients: { service: KubeClient; management: KubeClient[] },
  { n, concurrency }: { n: number; concurrency: number },
): Promise<PhysicalFloorRun> {
  const tally: WriteTally = { service: 0, management: 0 };
  const started = performance.now();
  await inParallel(n, concurrency, async (i) => {
    const mgmt = clients.management[i % clients.management.length]!;
    await (what === "create" ? createCopy : deleteCopy)({ set, i, service: clients.service, mgmt, tally });
  });
  const ms = performance.now() - started;
  return { ms, writesPerCluster: { service: tally.service / n, management: tally.management / n } };
}

/** Waits (untimed) until no namespace of the first k copies is left on any management cluster. */
export async function physicalFloorSwept(
  management: KubeClient[],
  k: number,
  timeoutMs: number,
): Promise<void> {
  await waitFor(
    "the physical floor's namespaces swept",
    async () => {
      for (const client of management) {
        const namespaces = (await client.list<KubeObject>(NamespaceResource, {})).items;
        const copy = (name = ""): number => Number(/^pfm-(\d+)/.exec(name)?.[1] ?? Infinity);
        if (namespaces.some((ns) => copy(ns.metadata.name) < k)) return false;
      }
      return true;
    },
    { timeoutMs, intervalMs: 1_000 },
  );
}
