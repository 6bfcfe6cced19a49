/**
 * The portal's reads and writes against the service cluster (decision 0014): views read the
 * informers' caches, never a list per request; writes go as the portal's own identity (in group
 * hcp:session-brokers), naming the person they act for, so admission can check owner and approver.
 */
import { randomBytes } from "node:crypto";
import {
  ACCESS_SESSION_KIND,
  ACCESS_LEVELS,
  ACCESS_SESSION_TTL_SECONDS,
  AccessSessionResource,
  type AccessLevel,
  type AccessSession,
} from "../api/v1alpha1/accesssession.ts";
import { API_VERSION } from "../api/v1alpha1/meta.ts";
import { ManagementClusterResource, type ManagementCluster } from "../api/v1alpha1/managementcluster.ts";
import { Informer } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import {
  ExternalAuthResource,
  HcpClusterResource,
  NodePoolResource,
  type ExternalAuth,
  type HcpCluster,
  type NodePool,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../api/work/v1.ts";
import { RETRY_ANNOTATION, WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { ARM_LABELS } from "../api/v1alpha1/index.ts";
import { ConfigMapResource } from "../api/core.ts";
import type { KubeObject } from "../api/meta/v1.ts";
import { eventType } from "../runtime/events.ts";
import { traceOperation, type RequestTrace } from "../hcpctl/trace.ts";
import { findOperations, type OperationMatch } from "../hcpctl/trace-find.ts";
import { eventRow, operationRows } from "./operations.ts";
import { assemble, workSelector } from "../hcpctl/snapshot.ts";
import { staleOf } from "../hcpctl/stale.ts";
import { buildTree } from "../hcpctl/tree.ts";
import { summariseManagedFields } from "../runtime/apply.ts";
import type { ClusterView, PortalBackend } from "./app.ts";
import type { ManagementClusterRow, SessionRow } from "./views.ts";

export class KubePortalBackend implements PortalBackend {
  readonly #client: KubeClient;
  readonly #now: () => number;
  readonly managementClusterInformer: Informer<ManagementCluster>;
  readonly sessionInformer: Informer<AccessSession>;
  readonly clusterInformer: Informer<HcpCluster>;
  readonly nodePoolInformer: Informer<NodePool>;

  constructor(client: KubeClient, now: () => number = Date.now) {
    this.#client = client;
    this.#now = now;
    this.managementClusterInformer = new Informer<ManagementCluster>({
      client,
      type: ManagementClusterResource,
    });
    this.sessionInformer = new Informer<AccessSession>({ client, type: AccessSessionResource });
    // The list reads clusters from this cache alone; managed fields are dropped, as the operators' caches do.
    this.clusterInformer = new Informer<HcpCluster>({
      client,
      type: HcpClusterResource,
      transform: summariseManagedFields,
    });
    this.nodePoolInformer = new Informer<NodePool>({
      client,
      type: NodePoolResource,
      transform: summariseManagedFields,
    });
  }

  /** Runs the informers until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(
      [this.managementClusterInformer, this.sessionInformer, this.clusterInformer, this.nodePoolInformer].map(
        (i) => i.run(signal),
      ),
    );
  }

  clusters(): readonly HcpCluster[] {
    return this.clusterInformer.list();
  }

  /**
   * hcpctl's tree of one cluster: the cluster, its pools and its management cluster from the
   * caches; its ExternalAuths and ManifestWorks read now (a page view, not the list, and works
   * with their feedback are too large to cache for 10,000 clusters).
   */
  async cluster(namespace: string, name: string): Promise<ClusterView | undefined> {
    const cluster = this.clusterInformer.get(namespace, name);
    if (!cluster) return undefined;
    const placed = cluster.status?.managementCluster;
    const pools = this.nodePoolInformer.list(namespace).filter((p) => p.spec.clusterRef.name === name);
    const uids = [cluster, ...pools].map((o) => o.metadata.uid ?? "").filter(Boolean);
    const [auths, works, events] = await Promise.all([
      this.#client.list<ExternalAuth>(ExternalAuthResource, { namespace }),
      this.#client.list<ManifestWork>(ManifestWorkResource, { labelSelector: workSelector(name, namespace) }),
      Promise.all(
        uids.map((uid) =>
          this.#client.list<KubeObject>(eventType, { namespace, fieldSelector: `involvedObject.uid=${uid}` }),
        ),
      ),
    ]);
    const snapshot = assemble({
      cluster,
      pools: this.nodePoolInformer.list(namespace),
      externalAuths: auths.items,
      managementCluster: placed ? this.managementClusterInformer.get("", placed) : undefined,
      works: works.items,
    });
    const now = this.#now();
    const at = new Date(now).toISOString().replace(/\.\d+Z$/, "Z");
    return {
      tree: buildTree(snapshot, new Date(now)),
      operations: operationRows(cluster, pools, at),
      events: events
        .flatMap((l) => l.items.map(eventRow))
        .sort((a, b) => b.last.localeCompare(a.last))
        .slice(0, 100),
      stale: staleOf(cluster, snapshot.works, now),
      failed: cluster.status?.conditions?.some((c) => c.type === "Degraded" && c.status === "True") ?? false,
    };
  }

  /**
   * `hcpctl trace`'s RequestTrace for a correlation or client request ID: clusters and pools from
   * the caches, the operation ConfigMaps and the matched CRs' works read now (a form's submit).
   */
  async trace(id: string): Promise<RequestTrace | undefined> {
    const configMaps = await this.#client.list<KubeObject>(ConfigMapResource, {
      labelSelector: `${ARM_LABELS.operation}=true`,
    });
    const matches = findOperations(id, {
      clusters: this.clusterInformer.list(),
      pools: this.nodePoolInformer.list(),
      configMaps: configMaps.items,
    });
    if (matches.length === 0) return undefined;
    const now = new Date(this.#now()).toISOString().replace(/\.\d+Z$/, "Z");
    const works = await Promise.all(matches.map((m) => this.#worksOf(m)));
    return {
      apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
      kind: "RequestTrace",
      id,
      observedAt: now,
      operations: matches.map((match, i) => traceOperation({ match, works: works[i] ?? [], now })),
    };
  }

  /** The CR's own works, as `hcpctl trace` selects them: a cluster's (not its pools'), or a pool's. */
  async #worksOf(m: OperationMatch): Promise<ManifestWork[]> {
    const uid = m.cr?.metadata.uid;
    if (!uid) return [];
    const selector =
      m.crKind === "NodePool"
        ? `${WORK_LABELS.nodePool}=${uid}`
        : `${WORK_LABELS.clusterUid}=${uid},!${WORK_LABELS.nodePool}`;
    return (await this.#client.list<ManifestWork>(ManifestWorkResource, { labelSelector: selector })).items;
  }

  async retry(actor: string, namespace: string, name: string): Promise<void> {
    if (!this.clusterInformer.get(namespace, name)) throw new Error(`no HcpCluster ${namespace}/${name}`);
    const asked = `${new Date(this.#now()).toISOString()} by ${actor}`;
    await this.#client.mergePatch(
      HcpClusterResource,
      { name, namespace },
      { metadata: { annotations: { [RETRY_ANNOTATION]: asked } } },
    );
  }

  managementClusters(): ManagementClusterRow[] {
    return this.managementClusterInformer
      .list()
      .map((mc) => ({
        name: mc.metadata.name ?? "",
        phase: mc.status?.phase ?? "Pending",
        hostedClusters: mc.status?.hostedClusters ?? 0,
        capacity: mc.spec.capacity.maxHostedClusters,
        connected: mc.status?.conditions?.some((c) => c.type === "Connected" && c.status === "True") ?? false,
        cordoned: mc.spec.schedulable === false,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  sessions(): SessionRow[] {
    return this.sessionInformer
      .list()
      .map((s) => ({
        name: s.metadata.name ?? "",
        owner: s.spec.owner,
        cluster: `${s.spec.clusterRef.namespace}/${s.spec.clusterRef.name}`,
        level: s.spec.level,
        phase: s.status?.phase ?? "Pending",
        reason: s.spec.reason,
        decided: s.spec.approval !== undefined,
        revoked: s.spec.revocation !== undefined,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async requestSession(actor: string, form: Record<string, string>): Promise<string> {
    const { namespace, cluster, level, reason, ttlSeconds } = parseSessionForm(form);
    const name = `${cluster}-${randomBytes(4).toString("hex")}`;
    const session: AccessSession = {
      apiVersion: API_VERSION,
      kind: ACCESS_SESSION_KIND,
      metadata: { name },
      spec: {
        owner: actor,
        clusterRef: { namespace, name: cluster },
        level,
        reason,
        ttlSeconds,
      },
    };
    await this.#client.create(AccessSessionResource, session);
    return name;
  }

  async decideSession(actor: string, name: string, decision: "Approved" | "Denied"): Promise<void> {
    const session = this.sessionInformer.get("", name);
    if (!session) throw new Error(`no AccessSession "${name}"`);
    // Admission refuses this too; saying it here gives the person a clear reason.
    if (session.spec.owner === actor) throw new Error("you cannot decide your own session");
    if (session.spec.approval) throw new Error(`already ${session.spec.approval.decision}`);
    await this.#client.mergePatch(
      AccessSessionResource,
      { name },
      {
        spec: { approval: { decision, by: actor } },
      },
    );
  }

  async revokeSession(actor: string, name: string): Promise<void> {
    if (!this.sessionInformer.get("", name)) throw new Error(`no AccessSession "${name}"`);
    await this.#client.mergePatch(
      AccessSessionResource,
      { name },
      {
        spec: { revocation: { by: actor } },
      },
    );
  }

  async cordon(_actor: string, managementCluster: string, cordoned: boolean): Promise<void> {
    if (!this.managementClusterInformer.get("", managementCluster)) {
      throw new Error(`no ManagementCluster "${managementCluster}"`);
    }
    await this.#client.mergePatch(
      ManagementClusterResource,
      { name: managementCluster },
      {
        spec: { schedulable: !cordoned },
      },
    );
  }
}

/** The request form's fields, each refused with a message naming it. */
export function parseSessionForm(form: Record<string, string>): {
  namespace: string;
  cluster: string;
  level: AccessLevel;
  reason: string;
  ttlSeconds: number;
} {
  const field = (name: string): string => form[name]?.trim() ?? "";
  const [namespace, cluster, level, reason] = ["namespace", "cluster", "level", "reason"].map(field);
  if (!namespace || !cluster) throw new Error("cluster: name its namespace and name");
  if (!(ACCESS_LEVELS as readonly string[]).includes(level ?? "")) {
    throw new Error(`level must be one of ${ACCESS_LEVELS.join(", ")}, got "${level}"`);
  }
  if (!reason) throw new Error("reason: say why you need access");
  const ttlSeconds = parseTtl(field("ttlSeconds") || "3600");
  return { namespace, cluster, level: level as AccessLevel, reason, ttlSeconds };
}

function parseTtl(text: string): number {
  const ttl = Number(text);
  const { min, max } = ACCESS_SESSION_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < min || ttl > max) {
    throw new Error(`ttlSeconds must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return ttl;
}
