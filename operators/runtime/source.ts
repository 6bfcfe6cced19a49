/**
 * Sources turn informer events into reconcile requests (keys only, never the event), like
 * controller-runtime's Kind source with EnqueueRequestForObject or EnqueueRequestsFromMapFunc.
 */
import type { Request } from "./controller.ts";
import type { Informer } from "./informer.ts";
import type { KubeObject } from "./kube.ts";

export interface Enqueuer {
  enqueue(req: Request): void;
}

export type MapFunc<T extends KubeObject> = (obj: T) => Request[];

/** Enqueues the object itself on add, update and delete. */
export function enqueueForObject<T extends KubeObject>(
  informer: Pick<Informer<T>, "addEventHandler" | "cluster">,
  target: Enqueuer,
): void {
  enqueueMapped(informer, target, (obj) => [
    { cluster: informer.cluster, namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" },
  ]);
}

/**
 * Enqueues whatever `map` returns for each changed object (e.g. its owner on another cluster).
 * `relevant` (controller-runtime's update predicate) drops updates that change nothing the
 * targets read; adds and deletes always pass.
 */
export function enqueueMapped<T extends KubeObject>(
  informer: Pick<Informer<T>, "addEventHandler">,
  target: Enqueuer,
  map: MapFunc<T>,
  relevant?: (oldObj: T, newObj: T) => boolean,
): void {
  const push = (obj: T): void => {
    for (const req of map(obj)) target.enqueue(req);
  };
  informer.addEventHandler({
    onAdd: push,
    onUpdate: (oldObj, newObj) => {
      if (relevant && oldObj !== newObj && !relevant(oldObj, newObj)) return;
      push(newObj);
      // A mapping can change with the object (a new owner label): the old target must hear too.
      if (oldObj !== newObj) push(oldObj);
    },
    onDelete: push,
  });
}
