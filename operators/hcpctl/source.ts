/**
 * Where describe reads a cluster's objects from: the service cluster (live), or a must-gather
 * directory (offline, gather.ts). Both give the same snapshot, so the tree and its rendering are
 * the same code either way.
 */
import type { Connection } from "./kube.ts";
import type { ClusterSnapshot } from "./model.ts";
import { fetchSnapshot } from "./snapshot.ts";

export interface SourceRead {
  snapshot: ClusterSnapshot;
  /** When the objects were read (ms since the epoch): now, or when they were gathered. */
  readAt: number;
}

export interface ClusterSource {
  /**
   * The cluster's objects; a CliError naming what is missing when the cluster is not there. No
   * namespace: the source's own default (the context's, or the one gathered).
   */
  read(name: string, namespace?: string): Promise<SourceRead>;
}

export function liveSource(conn: Connection, now: () => number): ClusterSource {
  return {
    async read(name, namespace) {
      const snapshot = await fetchSnapshot(conn, name, namespace ?? conn.namespace);
      return { snapshot, readAt: now() };
    },
  };
}
