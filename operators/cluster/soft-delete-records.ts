/**
 * Where the cluster controller keeps soft-deleted clusters' records (api/v1alpha1/deleted-cluster.ts):
 * ConfigMaps in the operators' namespace, read from the apiserver (a record decides what is kept in
 * Azure, so never from a cache that may lag behind its write).
 */
import { ConfigMapResource } from "../api/core.ts";
import {
  decodeDeletedCluster,
  deletedClusterRecordName,
  encodeDeletedCluster,
  type DeletedClusterRecord,
  type RecordConfigMap,
} from "../api/v1alpha1/deleted-cluster.ts";
import type { KubeClient } from "../runtime/kube.ts";

export interface DeletedClusterRecords {
  /** The cluster's record; undefined when there is none, or one that cannot be read (it is written again). */
  find(clusterID: string, opts: { signal?: AbortSignal }): Promise<DeletedClusterRecord | undefined>;
  /** Creates or replaces the record. */
  write(record: DeletedClusterRecord, opts: { signal?: AbortSignal }): Promise<void>;
}

export class ConfigMapDeletedClusterRecords implements DeletedClusterRecords {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #fieldManager: string;

  constructor(client: KubeClient, namespace: string, fieldManager: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#fieldManager = fieldManager;
  }

  async find(clusterID: string, opts: { signal?: AbortSignal }): Promise<DeletedClusterRecord | undefined> {
    const cm = await this.#client.find<RecordConfigMap>(
      ConfigMapResource,
      deletedClusterRecordName(clusterID),
      this.#namespace,
      opts,
    );
    if (!cm) return undefined;
    try {
      return decodeDeletedCluster(cm);
    } catch {
      return undefined;
    }
  }

  async write(record: DeletedClusterRecord, opts: { signal?: AbortSignal }): Promise<void> {
    await this.#client.apply(ConfigMapResource, encodeDeletedCluster(record, this.#namespace), {
      fieldManager: this.#fieldManager,
      force: true,
      signal: opts.signal,
    });
  }
}
