/**
 * service-cluster-loss: the service cluster is lost with everything in it and the region is
 * restored from its last backup, as docs/operations.md ("Back up and restore the region") has an
 * SRE do it. While the workload's clusters are Ready or still provisioning, the fault waits for a
 * backup taken after it began, creates more clusters after that backup (what the recovery point
 * loses), kills the operators, stops the service apiserver, deletes every key under its etcd
 * prefix, starts it again empty, installs what a region deploy installs (CRDs, namespaces, the
 * admission policies; not the region's objects), restores the newest backup with the product's
 * restoreRegion, and starts the operators again. What is judged afterwards (restore-invariants.ts):
 * nothing of the backup lost or made twice, what came after it counted as lost beyond the
 * recovery point, and what that left behind reported by the region rather than orphaned.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { NamespaceResource } from "../../operators/api/core.ts";
import { HostedClusterResource } from "../../operators/api/hypershift/v1beta1/index.ts";
import { HcpClusterResource, originalUid, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import type { BackupDocument } from "../../operators/regionbackup/document.ts";
import { restoreRegion } from "../../operators/regionbackup/restore.ts";
import { installAdmission } from "../harness/admission.ts";
import { crdFilesIn, installCrds } from "../harness/crds.ts";
import { repoCrdDir } from "../harness/region.ts";
import { seconds } from "./fault-tools.ts";
import type { Fault, FaultContext } from "./faults.ts";
import { OPERATORS_NAMESPACE } from "./region.ts";
import { REGION_BACKUP_INTERVAL_S } from "./region-backup.ts";
import { backedUpClusters, createdAfter, identities } from "./restore-invariants.ts";
import type { Expected } from "./workload.ts";

const REQUEST_TIMEOUT_MS = 20_000;
/** Two intervals and the time a backup takes under load. */
const BACKUP_WAIT_MS = (3 * REGION_BACKUP_INTERVAL_S + 60) * 1000;
/** How long before the next backup is due the operators are killed at the latest. */
const KILL_MARGIN_MS = 2_000;

/** Polls `check` until it yields a value or the deadline passes; a failed read is a no. */
async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = await check().catch(() => undefined);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

/** Deletes every key under `prefix` through etcd's JSON gateway: the apiserver's whole store. */
async function wipeEtcdPrefix(etcdUrl: string, prefix: string): Promise<number> {
  const end = Buffer.from(prefix);
  end[end.length - 1]! += 1;
  const res = await fetch(`${etcdUrl}/v3/kv/deleterange`, {
    method: "POST",
    body: JSON.stringify({ key: Buffer.from(prefix).toString("base64"), range_end: end.toString("base64") }),
  });
  if (!res.ok) throw new Error(`etcd deleterange ${prefix}: HTTP ${res.status} ${await res.text()}`);
  return Number(((await res.json()) as { deleted?: string }).deleted ?? 0);
}

/** Whether one of `made` has its HostedCluster on a management cluster: its work reached an agent. */
async function reachedManagement(ctx: FaultContext, made: Expected[]): Promise<true | undefined> {
  const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  const names = new Set(made.map((e) => `${e.namespace}/${e.name}`));
  const clusters = await ctx.chaos.service.listAll<HcpCluster>(HcpClusterResource, { signal });
  const namespaces = new Set(
    clusters.items
      .filter((c) => names.has(`${c.metadata.namespace}/${c.metadata.name}`))
      .map((c) => `ocm-local-${originalUid(c)}`),
  );
  for (const m of ctx.chaos.management) {
    const hosted = await m.listAll(HostedClusterResource, { signal });
    if (hosted.items.some((h) => namespaces.has(h.metadata.namespace ?? ""))) return true;
  }
  return undefined;
}

/** What an empty service cluster needs before a restore, as a region deploy installs it; nothing of the region's. */
async function prepareEmpty(ctx: FaultContext, kubeconfigPath: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await installCrds(kc, await crdFilesIn(repoCrdDir));
  const service = ctx.chaos.service;
  await service.createIfAbsent(NamespaceResource, { metadata: { name: OPERATORS_NAMESPACE } });
  // Each consumer's namespace (maestro-server keeps its deleted-works record there).
  for (const m of ctx.chaos.management)
    await service.createIfAbsent(NamespaceResource, { metadata: { name: m.cluster } });
  await installAdmission(service, OPERATORS_NAMESPACE);
}

/** The backup's clusters by `namespace/name`, with their pools' replicas (undefined: no pool held). */
function heldClusters(doc: BackupDocument): Map<string, number | undefined> {
  const held = new Map<string, number | undefined>();
  // One being deleted at the backup is deleted again after the restore: the workload's deletion stands.
  const objects = doc.objects.filter((o) => !o.deleting).map((o) => ({ type: o.type, object: o.object }));
  for (const { type, object } of objects)
    if (type === "hcp.aro.dev/HcpCluster")
      held.set(`${object.metadata.namespace}/${object.metadata.name}`, undefined);
  for (const { type, object } of objects) {
    if (type !== "hcp.aro.dev/NodePool") continue;
    const spec = object["spec"] as { clusterRef?: { name?: string }; replicas?: number } | undefined;
    const cluster = `${object.metadata.namespace}/${spec?.clusterRef?.name ?? ""}`;
    if (held.has(cluster)) held.set(cluster, spec?.replicas);
  }
  return held;
}

/** A backup taken after `since`, the clusters created after it, and the operators killed before the next. */
async function loseAfterBackup(ctx: FaultContext, since: string): Promise<{ lostAt: number; extra: number }> {
  const { backup } = ctx.chaos;
  const first = await until(async () => {
    const p = await backup.latest(AbortSignal.timeout(REQUEST_TIMEOUT_MS));
    return p && p.takenAt > since ? p : undefined;
  }, BACKUP_WAIT_MS);
  if (!first) throw new Error(`no region backup taken after ${since} within ${seconds(BACKUP_WAIT_MS)}`);
  const nextDue = Date.now() + REGION_BACKUP_INTERVAL_S * 1000 - KILL_MARGIN_MS;
  const count = Math.max(2, Math.ceil(ctx.settings.n / 10));
  ctx.progress(`backup ${first.latest} seen; creating ${count} clusters after it`);
  const made = await Promise.all(Array.from({ length: count }, () => ctx.workload.createOne()));
  // Mid-provisioning, and with something on a management cluster to leave behind, if there is time.
  const reached = await until(
    async () => (Date.now() > nextDue ? false : await reachedManagement(ctx, made)),
    Math.max(0, nextDue - Date.now()),
  );
  await Promise.all(ctx.chaos.operators.map((s) => s.component.kill()));
  ctx.note(
    `${count} clusters created after the backup taken at ${first.takenAt}; ${reached ? "one of them had reached its management cluster" : "none on a management cluster yet"} when the operators were killed`,
  );
  return { lostAt: Date.now(), extra: count };
}

export const serviceClusterLoss: Fault = {
  name: "service-cluster-loss",
  what: `the service cluster lost: once a backup (every ${REGION_BACKUP_INTERVAL_S} s) holds the workload's clusters, Ready and provisioning, more are created after it; the operators killed, the service apiserver's etcd prefix deleted and the apiserver started again empty; CRDs, namespaces and admission installed, the newest backup restored with restoreRegion, the operators started again`,
  async run(ctx) {
    const { chaos } = ctx;
    const service = chaos.region.clusters.find((c) => c.role === "service")!;
    const { lostAt } = await loseAfterBackup(ctx, new Date().toISOString());
    const before = identities(await chaos.snapshot(AbortSignal.timeout(60_000)));
    // The backup to restore is whichever is newest now: one may have been written since.
    const pointer = await chaos.backup.latest(AbortSignal.timeout(REQUEST_TIMEOUT_MS));
    if (!pointer) throw new Error("no region backup to restore");
    let wiped = 0;
    await service.apiServer!.restart({
      whileDown: async () => {
        wiped = await wipeEtcdPrefix(chaos.region.etcdUrl, `/${service.name}/registry/`);
      },
    });
    ctx.progress(`${wiped} keys of ${service.name} deleted; restoring ${pointer.latest}`);
    const startedAt = Date.now();
    await prepareEmpty(ctx, service.kubeconfigPath);
    const doc = await chaos.backup.open(pointer.latest, AbortSignal.timeout(REQUEST_TIMEOUT_MS));
    const summary = await restoreRegion({
      client: chaos.service,
      doc,
      source: pointer.latest,
      namespace: OPERATORS_NAMESPACE,
    });
    const restoreMs = Date.now() - startedAt;
    const backedUp = backedUpClusters(doc);
    const lostBeyondRpo = ctx.workload.rebase(heldClusters(doc));
    ctx.restored({
      startedAt,
      lostBeyondRpo,
      context: { before, backedUp, beyondRpo: createdAfter(before, backedUp, doc.takenAt) },
    });
    const created = Object.values(summary.counts).reduce((n, c) => n + c.created, 0);
    ctx.note(
      `backup taken at ${doc.takenAt}; recovery point ${seconds(lostAt - Date.parse(doc.takenAt))} (from takenAt to the operators' kill); ${wiped} etcd keys deleted; ${created} objects restored (${backedUp.size} clusters) in ${seconds(restoreMs)}; ${lostBeyondRpo.length} changes lost beyond it`,
    );
    if (summary.droppedOwners.length > 0)
      ctx.note(`owner references dropped by the restore: ${summary.droppedOwners.join("; ")}`);
    // The during-fault writes land on the restored region while the operators start again.
    ctx.injected();
    await Promise.all([...chaos.operators.map((s) => s.restart()), ctx.workload.createAgain()]);
  },
};
