/**
 * `hcpctl cluster deleted` (the soft-deleted clusters, api/v1alpha1/deleted-cluster.ts: when each
 * went, until when it can be undeleted, its last backup) and `hcpctl cluster undelete NAME`: the
 * cluster created again from its record under its ID (hcp.aro.dev/original-uid, which only a region
 * restorer may set: the same namespaces, work, Azure resources, OIDC issuer and keys) with
 * spec.restore naming its last backup, then its node pools and external auths, then the record
 * dropped. Each step is skipped when done, so running it again after a failure finishes the job.
 */
import { Option, type Command } from "commander";
import { ConfigMapResource } from "../../api/core.ts";
import {
  DELETED_CLUSTER_LABEL,
  DELETED_CLUSTER_NAME_LABELS,
  decodeDeletedCluster,
  deletedClusterRecordName,
  undeleteDeadline,
  type DeletedClusterRecord,
  type RecordConfigMap,
  type RecordedObject,
} from "../../api/v1alpha1/deleted-cluster.ts";
import {
  API_VERSION,
  ExternalAuthResource,
  HcpClusterResource,
  NodePoolResource,
  ORIGINAL_UID_ANNOTATION,
  originalUid,
  type HcpCluster,
} from "../../api/v1alpha1/index.ts";
import type { ResourceType } from "../../api/meta/v1.ts";
import { isApiError } from "../../runtime/kube.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { formatTable } from "../table.ts";
import { connectorOf, dataOutputOption } from "./maintenance-cli.ts";
import { printData, type DataFormat } from "./maintenance.ts";

export interface ClusterDeletedFlags {
  namespace?: string;
  allNamespaces: boolean;
  operatorsNamespace: string;
  output?: DataFormat;
}

export interface ClusterUndeleteFlags {
  namespace?: string;
  operatorsNamespace: string;
  id?: string;
}

/** The soft-deleted clusters' records; those that cannot be read are named on stderr. */
async function readRecords(
  io: Io,
  conn: Connection,
  operatorsNamespace: string,
  selector = DELETED_CLUSTER_LABEL,
): Promise<DeletedClusterRecord[]> {
  const list = await conn.list<RecordConfigMap>(ConfigMapResource, {
    namespace: operatorsNamespace,
    labelSelector: selector,
  });
  const records: DeletedClusterRecord[] = [];
  for (const cm of list.items) {
    try {
      records.push(decodeDeletedCluster(cm));
    } catch (err) {
      io.stderr.write(`warning: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
  return records;
}

/** What can be done with a record now. */
export function recordState(
  record: DeletedClusterRecord,
  now: number,
): "Deleting" | "Undeletable" | "Purging" {
  const deadline = undeleteDeadline(record);
  if (deadline === undefined) return "Deleting";
  return now < deadline ? "Undeletable" : "Purging";
}

export async function runClusterDeleted(io: Io, connect: Connect, flags: ClusterDeletedFlags): Promise<void> {
  const conn = connect();
  const namespace = flags.namespace ?? conn.namespace;
  const all = await readRecords(io, conn, flags.operatorsNamespace);
  const records = flags.allNamespaces ? all : all.filter((r) => r.namespace === namespace);
  records.sort((a, b) => (b.deletedAt ?? "~").localeCompare(a.deletedAt ?? "~"));
  if (flags.output) {
    printData(io, flags.output, { items: records });
    return;
  }
  if (records.length === 0) {
    io.stdout.write(`No soft-deleted clusters${flags.allNamespaces ? "" : ` in namespace ${namespace}`}.\n`);
    return;
  }
  const rows = records.map((r) => [
    r.namespace,
    r.cluster.name,
    r.clusterID,
    recordState(r, io.now()),
    r.deletedAt ?? "-",
    r.purgeAfter ?? "-",
    r.lastBackup ?? "(none)",
  ]);
  io.stdout.write(
    formatTable([
      ["NAMESPACE", "NAME", "CLUSTER ID", "STATE", "DELETED", "PURGE AFTER", "LAST BACKUP"],
      ...rows,
    ]),
  );
}

/** The one record the undelete is about: by --id, else the only one of that name. */
async function recordFor(
  io: Io,
  conn: Connection,
  args: { name: string; namespace: string; flags: ClusterUndeleteFlags },
): Promise<DeletedClusterRecord> {
  const { name, namespace, flags } = args;
  const selector = `${DELETED_CLUSTER_NAME_LABELS.namespace}=${namespace},${DELETED_CLUSTER_NAME_LABELS.name}=${name}`;
  const found = (
    await readRecords(io, conn, flags.operatorsNamespace, `${DELETED_CLUSTER_LABEL},${selector}`)
  ).filter((r) => flags.id === undefined || r.clusterID === flags.id);
  const what = `${namespace}/${name}${flags.id ? ` with ID ${flags.id}` : ""}`;
  if (found.length === 0)
    throw new CliError(
      `no soft-deleted cluster ${what} (hcpctl cluster deleted lists them): it was never deleted with a retention, or it was purged`,
    );
  if (found.length > 1)
    throw new CliError(
      `${found.length} soft-deleted clusters ${what}: pick one with --id (${found.map((r) => r.clusterID).join(", ")})`,
    );
  return found[0] as DeletedClusterRecord;
}

/** Why the record cannot be undeleted now, if it cannot. */
export function undeleteRefusal(record: DeletedClusterRecord, now: number): string | undefined {
  const deadline = undeleteDeadline(record);
  if (deadline === undefined || record.purgeAfter === undefined)
    return "it is still being deleted; undelete it once `hcpctl cluster deleted` shows it Undeletable";
  if (now >= Date.parse(record.purgeAfter))
    return `retention ended at ${record.purgeAfter}; the cluster is being purged`;
  if (now >= deadline)
    return `retention ends at ${record.purgeAfter}, in less than ${Math.ceil((Date.parse(record.purgeAfter) - deadline) / 1000)} s: too late to undelete, the purge is about to start`;
  return undefined;
}

/** The HcpCluster as it was, under its ID, restored from its last backup. */
function clusterFrom(record: DeletedClusterRecord): HcpCluster {
  const { cluster } = record;
  // A restore asked of the old object is not carried over: the last backup is the one to restore.
  const spec = { ...cluster.spec };
  delete spec.restore;
  return {
    apiVersion: API_VERSION,
    kind: HcpClusterResource.kind,
    metadata: {
      name: cluster.name,
      namespace: record.namespace,
      ...(cluster.labels ? { labels: cluster.labels } : {}),
      annotations: { ...cluster.annotations, [ORIGINAL_UID_ANNOTATION]: record.clusterID },
    },
    spec: { ...spec, ...(record.lastBackup ? { restore: { backupName: record.lastBackup } } : {}) },
  };
}

/** Creates the object unless one of its name is there; resolves whether it created it. */
async function createIfAbsent<S>(
  conn: Connection,
  type: ResourceType,
  namespace: string,
  obj: RecordedObject<S>,
): Promise<boolean> {
  const body = {
    apiVersion: API_VERSION,
    kind: type.kind,
    metadata: {
      name: obj.name,
      namespace,
      ...(obj.labels ? { labels: obj.labels } : {}),
      ...(obj.annotations ? { annotations: obj.annotations } : {}),
    },
    spec: obj.spec,
  };
  try {
    await conn.client.create(type, body);
    return true;
  } catch (err) {
    if (isApiError(err, 409)) return false;
    throw conn.explain(err, type);
  }
}

/** The cluster under its ID: created, or found from an earlier run; refused when another holds the name. */
async function ensureCluster(conn: Connection, record: DeletedClusterRecord): Promise<"created" | "existed"> {
  const { name } = record.cluster;
  const where = `hcpcluster ${record.namespace}/${name}`;
  const existing = await conn.get<HcpCluster>(HcpClusterResource, name, record.namespace);
  if (existing && originalUid(existing) !== record.clusterID)
    throw new CliError(
      `${where} exists with another ID (${originalUid(existing)}): a cluster of that name was created after the deletion; the soft-deleted one (${record.clusterID}) can only come back under its name once that one is gone`,
    );
  if (existing?.metadata.deletionTimestamp)
    throw new CliError(`${where} is being deleted again; undelete it once that ends`);
  if (existing) return "existed";
  try {
    await conn.client.create(HcpClusterResource, clusterFrom(record));
    return "created";
  } catch (err) {
    if (isApiError(err, 409)) return ensureCluster(conn, record);
    if (isApiError(err, 403) || isApiError(err, 422))
      throw new CliError(
        `the API server refused to create ${where} under its ID: ${err instanceof Error ? err.message : String(err)} (only a region restorer, system:masters or group hcp:region-restorers, may set ${ORIGINAL_UID_ANNOTATION})`,
        { cause: err },
      );
    throw conn.explain(err, HcpClusterResource);
  }
}

export async function runClusterUndelete(
  io: Io,
  connect: Connect,
  args: { name: string; flags: ClusterUndeleteFlags },
): Promise<void> {
  const conn = connect();
  const namespace = args.flags.namespace ?? conn.namespace;
  const record = await recordFor(io, conn, { name: args.name, namespace, flags: args.flags });
  const where = `hcpcluster/${args.name}`;
  const refused = undeleteRefusal(record, io.now());
  // A cluster this command created before it failed is finished whatever the time: it is live.
  const existing = await conn.get<HcpCluster>(HcpClusterResource, args.name, namespace);
  const resumed = existing !== undefined && originalUid(existing) === record.clusterID;
  if (refused && !resumed) throw new CliError(`${where}: ${refused}`);
  const cluster = await ensureCluster(conn, record);
  let pools = 0;
  for (const p of record.nodePools) if (await createIfAbsent(conn, NodePoolResource, namespace, p)) pools++;
  let auths = 0;
  for (const ea of record.externalAuths)
    if (await createIfAbsent(conn, ExternalAuthResource, namespace, ea)) auths++;
  await conn.client
    .delete(ConfigMapResource, {
      name: deletedClusterRecordName(record.clusterID),
      namespace: args.flags.operatorsNamespace,
    })
    .catch((err: unknown) => {
      throw conn.explain(err, ConfigMapResource);
    });
  const from = record.lastBackup
    ? `its control plane restored from ${record.lastBackup}`
    : "no backup was recorded: its control plane starts empty";
  io.stdout.write(
    `${where}: undeleted with its ID ${record.clusterID} (${cluster === "created" ? "created" : "already there"}; ${from}); ` +
      `${pools} of ${record.nodePools.length} node pool(s) and ${auths} of ${record.externalAuths.length} external auth(s) created\n`,
  );
}

const namespaceOption = (): Option =>
  new Option("-n, --namespace <namespace>", "namespace (default: the context's, else default)");
const operatorsNamespaceOption = (): Option =>
  new Option("--operators-namespace <namespace>", "where the operators keep the records").default(
    "hcp-system",
  );

/** `hcpctl cluster deleted` and `hcpctl cluster undelete`, under `hcpctl cluster`. */
export function addUndelete(cl: Command, io: Io): void {
  cl.command("deleted")
    .description("soft-deleted clusters: when each went, until when it can be undeleted, its last backup")
    .addOption(namespaceOption())
    .option("-A, --all-namespaces", "in every namespace", false)
    .addOption(operatorsNamespaceOption())
    .addOption(dataOutputOption("{items: records}"))
    .action(async (flags: ClusterDeletedFlags) => {
      await runClusterDeleted(io, connectorOf(cl), flags);
    });
  cl.command("undelete")
    .description(
      "bring a soft-deleted cluster back within its retention: the same ID, Azure resources and OIDC issuer, its control plane restored from its last backup, its node pools and external auths",
    )
    .argument("<cluster>", "the deleted HcpCluster's name")
    .addOption(namespaceOption())
    .addOption(operatorsNamespaceOption())
    .option("--id <clusterID>", "which one, when the name was soft-deleted more than once")
    .action(async (name: string, flags: ClusterUndeleteFlags) => {
      await runClusterUndelete(io, connectorOf(cl), { name, flags });
    });
}
