/**
 * An in-memory Lister for reconciler tests: the informer's read side over a plain list, with the
 * same indexers a controller registers, so a reconciler can be built without an apiserver.
 */
import type { IndexFunc, Lister } from "../../operators/runtime/informer.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";

export class FakeLister<T extends KubeObject> implements Lister<T> {
  readonly #items = new Map<string, T>();
  readonly #indexers: Record<string, IndexFunc<T>>;

  constructor(items: T[] = [], indexers: Record<string, IndexFunc<T>> = {}) {
    this.#indexers = indexers;
    for (const item of items) this.set(item);
  }

  /** Adds or replaces an object (by namespace and name). */
  set(item: T): void {
    this.#items.set(keyOf(item.metadata.namespace ?? "", item.metadata.name ?? ""), item);
  }

  delete(namespace: string, name: string): void {
    this.#items.delete(keyOf(namespace, name));
  }

  get(namespace: string, name: string): T | undefined {
    return this.#items.get(keyOf(namespace, name));
  }

  list(namespace?: string): T[] {
    const all = [...this.#items.values()];
    return namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? "") === namespace);
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.#indexers[indexName];
    if (!index) throw new Error(`FakeLister has no index ${indexName}`);
    return this.list().filter((o) => index(o).includes(value));
  }

  countByIndex(indexName: string, value: string): number {
    return this.byIndex(indexName, value).length;
  }
}

function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
