/**
 * What a chaos run asks of the region, and what it therefore expects to find: HcpClusters with
 * one NodePool each, created, some pools scaled, some clusters deleted. Every write goes through
 * the service cluster's apiserver and is retried until it lands (the apiserver may be the fault),
 * so what the workload records as expected is what was really asked.
 */
import { readFileSync } from "node:fs";
import { load } from "js-yaml";
import { NamespaceResource } from "../../operators/api/core.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";

const samples = new URL("../../config/samples/", import.meta.url);
const sample = <T>(file: string): T => load(readFileSync(new URL(file, samples), "utf8")) as T;

/** A cluster the workload created, and what should become of it. */
export interface Expected {
  namespace: string;
  name: string;
  pool: string;
  /** False once the workload deleted it: it and everything it had must be gone. */
  present: boolean;
  /** The pool's spec.replicas as last written. */
  replicas: number;
}

/** How long one write may take before it is tried again, and how long it is tried. */
const ATTEMPT_MS = 15_000;
const WRITE_DEADLINE_MS = 15 * 60_000;
const INITIAL_REPLICAS = 2;
const SCALED_REPLICAS = 3;

/** Runs a write until it lands: the apiserver, etcd or the network may be what is failing. */
async function landed(what: string, write: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + WRITE_DEADLINE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      await write(AbortSignal.timeout(ATTEMPT_MS));
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`${what}: not written within ${WRITE_DEADLINE_MS} ms`, { cause: err });
      await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * attempt)));
    }
  }
}

export async function inParallel<T>(
  items: T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** One batch of a run: which clusters it deletes before and during the fault, and which it scales. */
export interface Batch {
  all: Expected[];
  deleteBefore: Expected[];
  deleteDuring: Expected[];
  scaleBefore: Expected[];
  scaleDuring: Expected[];
}

export class Workload {
  readonly #service: KubeClient;
  readonly #clusters = new Map<string, Expected>();
  /** Names of the clusters createOne made. */
  readonly #extras: string[] = [];
  /** Pools a restore lost while their clusters came back: made again by createAgain. */
  readonly #poolsAgain: Expected[] = [];
  readonly #cluster = sample<HcpCluster>("hcpcluster.yaml");
  readonly #pool = sample<NodePool>("nodepool-fixed.yaml");
  #next = 0;
  readonly concurrency: number;

  constructor(service: KubeClient, concurrency = 10) {
    this.#service = service;
    this.concurrency = concurrency;
  }

  /** Every cluster asked for so far, with what should become of it. */
  expected(): Expected[] {
    return [...this.#clusters.values()].map((e) => ({ ...e }));
  }

  /** Creates `n` clusters with a pool each and splits them in four: kept, deleted before, scaled, deleted during. */
  async createBatch(n: number): Promise<Batch> {
    const all = Array.from({ length: n }, () => this.#reserve());
    await inParallel(all, this.concurrency, (e) => this.#create(e));
    const part = (r: number): Expected[] => all.filter((_, i) => i % 4 === r);
    const scaled = part(2);
    const half = Math.ceil(scaled.length / 2);
    return {
      all,
      deleteBefore: part(1),
      deleteDuring: part(3),
      scaleBefore: scaled.slice(0, half),
      scaleDuring: scaled.slice(half),
    };
  }

  /** One more cluster, kept: new work for a fault that needs something to happen. */
  async createOne(): Promise<Expected> {
    const e = this.#reserve();
    this.#extras.push(e.name);
    await this.#create(e);
    return e;
  }

  /**
   * Deletes one cluster createOne made (the oldest still wanted, or a new one), so a deletion runs
   * under the fault without touching the batches' plans.
   */
  async deleteOne(): Promise<Expected> {
    const victim =
      this.expected().find((e) => e.present && this.#extras.includes(e.name)) ?? (await this.createOne());
    await this.delete([victim]);
    return victim;
  }

  async delete(clusters: Expected[]): Promise<void> {
    await inParallel(clusters, this.concurrency, async (e) => {
      const ref = { name: e.name, namespace: e.namespace };
      await landed(`delete ${e.namespace}/${e.name}`, (signal) =>
        this.#service.delete(HcpClusterResource, ref, { signal }),
      );
      this.#record(e, { present: false });
    });
  }

  async scale(clusters: Expected[], replicas = SCALED_REPLICAS): Promise<void> {
    await inParallel(clusters, this.concurrency, async (e) => {
      if (!this.#current(e).present) return;
      const ref = { name: e.pool, namespace: e.namespace };
      await landed(`scale ${e.namespace}/${e.pool}`, (signal) =>
        this.#service.mergePatch(NodePoolResource, ref, { spec: { replicas } }, { signal }),
      );
      this.#record(e, { replicas });
    });
  }

  /**
   * The region was restored from a backup holding `held` (each cluster by `namespace/name`, with
   * its pool's spec.replicas): what the workload asked for after it is undone, and expected so.
   * Says what was undone, each a change lost beyond the recovery point.
   */
  rebase(held: Map<string, number | undefined>): string[] {
    const undone: string[] = [];
    for (const [name, e] of this.#clusters) {
      const replicas = held.get(name);
      if (!held.has(name)) {
        if (e.present) undone.push(`creation of ${name}`);
        e.present = false;
      } else if (!e.present) {
        undone.push(`deletion of ${name}`);
        e.present = true;
      }
      // Listed before its pool was made (a backup lists kind by kind): the pool's creation is lost
      // beyond the recovery point, and the client makes it again (createAgain), as ARM's would.
      if (held.has(name) && replicas === undefined) {
        if (e.present) undone.push(`creation of ${e.namespace}/${e.pool}`);
        e.replicas = INITIAL_REPLICAS;
        this.#poolsAgain.push({ ...e });
        continue;
      }
      if (replicas !== undefined && replicas !== e.replicas) {
        if (e.present) undone.push(`scale of ${e.namespace}/${e.pool} to ${e.replicas}`);
        e.replicas = replicas;
      }
    }
    return undone;
  }

  /** Makes again the pools a restore lost while their clusters came back (rebase). */
  async createAgain(): Promise<void> {
    const again = this.#poolsAgain.splice(0).filter((e) => this.#current(e).present);
    await inParallel(again, this.concurrency, (e) => this.#create(e));
  }

  #current(e: Expected): Expected {
    return this.#clusters.get(`${e.namespace}/${e.name}`) ?? e;
  }

  /** Records a change on the workload's own entry (a batch's copy may be stale). */
  #record(e: Expected, change: Partial<Expected>): void {
    Object.assign(this.#current(e), change);
  }

  #reserve(): Expected {
    const i = this.#next++;
    const e: Expected = {
      namespace: `chaos-${Math.floor(i / 100)}`,
      name: `c${i}`,
      pool: `c${i}-workers`,
      present: true,
      replicas: INITIAL_REPLICAS,
    };
    this.#clusters.set(`${e.namespace}/${e.name}`, { ...e });
    return e;
  }

  async #create(e: Expected): Promise<void> {
    const base = this.#cluster;
    const cluster: HcpCluster = {
      ...base,
      metadata: { name: e.name, namespace: e.namespace },
      spec: {
        ...base.spec,
        dns: { baseDomainPrefix: e.name },
        platform: { azure: { ...base.spec.platform.azure, managedResourceGroup: `chaos-${e.name}-managed` } },
      },
    };
    const pool: NodePool = {
      ...this.#pool,
      metadata: { name: e.pool, namespace: e.namespace },
      spec: { ...this.#pool.spec, clusterRef: { name: e.name }, replicas: INITIAL_REPLICAS },
    };
    const create = (what: string, write: (signal: AbortSignal) => Promise<boolean>): Promise<void> =>
      landed(what, write);
    await create(`namespace ${e.namespace}`, (signal) =>
      this.#service.createIfAbsent(NamespaceResource, { metadata: { name: e.namespace } }, { signal }),
    );
    await create(`HcpCluster ${e.namespace}/${e.name}`, (signal) =>
      this.#service.createIfAbsent(HcpClusterResource, cluster, { signal }),
    );
    await create(`NodePool ${e.namespace}/${e.pool}`, (signal) =>
      this.#service.createIfAbsent(NodePoolResource, pool, { signal }),
    );
  }
}
