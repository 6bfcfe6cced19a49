/**
 * The management cluster controller's LoadReconciler on fakes: ManagementClusters and HcpClusters
 * to list, and status writers that record or, like the apiserver and informer, store. Shared by
 * operators/managementcluster/controller*.test.ts.
 */
import type { FakeLister } from "./lister.ts";
import {
  MANAGEMENT_CLUSTER_FINALIZER,
  type HcpCluster,
  type ManagementCluster,
  type ManagementClusterStatus,
} from "../../operators/api/v1alpha1/index.ts";
import type { KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import type { ManagementClusterWriter, PlacedLookup } from "../../operators/managementcluster/controller.ts";

export function managementCluster(name: string, max: number, schedulable?: boolean): ManagementCluster {
  return {
    // As the cache shows it once this controller has added its finalizer.
    metadata: { name, generation: 4, finalizers: [MANAGEMENT_CLUSTER_FINALIZER] },
    spec: {
      consumerName: name,
      capacity: { maxHostedClusters: max },
      ...(schedulable === undefined ? {} : { schedulable }),
    },
  };
}

export function hcpCluster(name: string, placedOn?: string): HcpCluster {
  return {
    metadata: { name, namespace: "customer" },
    spec: {} as HcpCluster["spec"],
    ...(placedOn ? { status: { managementCluster: placedOn } } : {}),
  };
}

/** What the apiserver shows placed when asked past the cache: the same as the cache, unless a test says. */
export const noneLive: PlacedLookup = () => Promise.resolve(0);

export class RecordingStatusWriter implements ManagementClusterWriter {
  readonly writes: Array<{ name: string; status: ManagementClusterStatus }> = [];
  readonly finalizers: string[] = [];

  applyStatus<T extends KubeObject>(_type: ResourceType, current: KubeObject, status: unknown) {
    this.writes.push({ name: current.metadata.name ?? "", status: status as ManagementClusterStatus });
    return Promise.resolve<T | undefined>(undefined);
  }

  addFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.finalizers.push(`+${finalizer}`);
    return Promise.resolve(true);
  }

  removeFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (!obj.metadata.finalizers?.includes(finalizer)) return Promise.resolve(false);
    this.finalizers.push(`-${finalizer}`);
    return Promise.resolve(true);
  }
}

/** Writes into the lister like the apiserver and the informer would, skipping equal statuses as Applier does. */
export class StoreWriter implements ManagementClusterWriter {
  writes = 0;
  readonly store: FakeLister<ManagementCluster>;
  /** Finalizer writes, as "+name" and "-name". */
  readonly finalizers: string[] = [];
  constructor(store: FakeLister<ManagementCluster>) {
    this.store = store;
  }
  addFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    return this.#setFinalizer(obj, finalizer, true);
  }
  removeFinalizer(_type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    return this.#setFinalizer(obj, finalizer, false);
  }
  #setFinalizer(obj: KubeObject, finalizer: string, present: boolean): Promise<boolean> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) return Promise.resolve(false);
    this.finalizers.push(`${present ? "+" : "-"}${finalizer}`);
    const mc = obj as ManagementCluster;
    const kept = finalizers.filter((f) => f !== finalizer);
    // A deleted object the last finalizer leaves is gone, as the apiserver does.
    if (!present && mc.metadata.deletionTimestamp && kept.length === 0)
      this.store.delete("", mc.metadata.name ?? "");
    else
      this.store.set({
        ...mc,
        metadata: { ...mc.metadata, finalizers: present ? [...kept, finalizer] : kept },
      });
    return Promise.resolve(true);
  }
  applyStatus<T extends KubeObject>(_type: ResourceType, current: KubeObject, status: unknown) {
    if (JSON.stringify(current["status"]) === JSON.stringify(status))
      return Promise.resolve<T | undefined>(undefined);
    this.writes++;
    const mc = { ...(current as ManagementCluster), status: status as ManagementClusterStatus };
    this.store.set(mc);
    return Promise.resolve(mc as unknown as T);
  }
}
