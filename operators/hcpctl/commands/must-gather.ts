/**
 * `hcpctl must-gather CLUSTER -o DIR`: what the service cluster holds about one cluster, for a
 * ticket or a later look: the HcpCluster, its NodePools and ExternalAuths, the ManagementCluster
 * it is placed on, its ManifestWorks (with the status and feedback the agent carried back from the
 * management cluster, which is everything of that side reachable without its credentials) and the
 * events of each, secrets redacted, and an index (gather.ts). `describe cluster NAME --from DIR` draws the
 * tree from it.
 */
import type { KubeObject } from "../../api/meta/v1.ts";
import { eventType } from "../../runtime/events.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { INDEX_FILE, prepareDirectory, writeGather } from "../gather.ts";
import type { ClusterSnapshot } from "../model.ts";
import { fetchSnapshot } from "../snapshot.ts";

export interface MustGatherOptions {
  namespace?: string;
  output: string;
  force: boolean;
}

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

function objectsOf(s: ClusterSnapshot): KubeObject[] {
  return [
    s.cluster,
    ...s.nodePools,
    ...s.externalAuths,
    ...(s.managementCluster ? [s.managementCluster] : []),
    ...s.works,
  ];
}

/** The events about each object, in whichever namespace they were recorded. */
async function eventsOf(conn: Connection, objects: KubeObject[]): Promise<Map<string, KubeObject[]>> {
  const uids = objects.map((o) => o.metadata.uid).filter((uid): uid is string => Boolean(uid));
  const lists = await Promise.all(
    uids.map((uid) => conn.list<KubeObject>(eventType, { fieldSelector: `involvedObject.uid=${uid}` })),
  );
  return new Map(uids.map((uid, i) => [uid, lists[i]?.items ?? []]));
}

export async function runMustGather(
  io: Io,
  connect: Connect,
  args: { name: string; opts: MustGatherOptions },
): Promise<void> {
  const dir = args.opts.output;
  await prepareDirectory(dir, args.opts.force);
  const conn = connect();
  const namespace = args.opts.namespace ?? conn.namespace;
  const snapshotAt = rfc3339(io.now());
  const snapshot = await fetchSnapshot(conn, args.name, namespace);
  const eventsAt = rfc3339(io.now());
  const events = await eventsOf(conn, objectsOf(snapshot));
  const index = await writeGather(dir, {
    snapshot,
    snapshotAt,
    events,
    eventsAt,
    source: { server: conn.target.server, context: conn.target.context },
  });
  const redacted = index.files.reduce((n, f) => n + (f.redacted?.length ?? 0), 0);
  const values = redacted === 1 ? "1 secret value" : `${redacted} secret values`;
  io.stdout.write(`wrote ${index.files.length} files and ${INDEX_FILE} to ${dir} (${values} redacted)\n`);
}
