/**
 * An in-memory stand-in for the KubeClient calls a reconciler makes (apply, find, create, delete,
 * listAll), recording each call so a unit test can assert what was sent. Objects are keyed by
 * group, plural, namespace and name; a create assigns a uid; an apply merges the sent fields over
 * the stored object (status through the status subresource only). Not an apiserver: no field
 * ownership, no defaults, no validation.
 */
import {
  KubeApiError,
  type ApplyOptions,
  type KubeObject,
  type ListOptions,
  type ObjectList,
  type ResourceType,
} from "../../operators/runtime/kube.ts";

export type KubeVerb = "apply" | "create" | "find" | "delete" | "listAll";

export interface KubeCall {
  verb: KubeVerb;
  /** `<plural>` or `<plural>.<group>`. */
  resource: string;
  namespace: string;
  name: string;
  fieldManager?: string;
  force?: boolean;
  subresource?: string;
  propagationPolicy?: string;
}

function resourceOf(t: Pick<ResourceType, "group" | "plural">): string {
  return t.group ? `${t.plural}.${t.group}` : t.plural;
}

function keyOf(
  t: Pick<ResourceType, "group" | "plural">,
  namespace: string | undefined,
  name: string,
): string {
  return `${resourceOf(t)}/${namespace ?? ""}/${name}`;
}

const clone = <T>(obj: T): T => structuredClone(obj);

export class RecordingKube {
  readonly calls: KubeCall[] = [];
  readonly #objects = new Map<string, { resource: string; object: KubeObject }>();
  readonly #failures: Array<{ verb: KubeVerb; name: string; error: Error }> = [];
  #uids = 0;
  #versions = 0;

  /** Stores an object as if it existed on the cluster (not recorded as a call). */
  seed(t: ResourceType, obj: KubeObject): KubeObject {
    const stored = clone(obj);
    stored.metadata.uid ??= `uid-${++this.#uids}`;
    // Every write moves the object to a new version, as an apiserver's would if it changed anything.
    stored.metadata.resourceVersion = String(++this.#versions);
    this.#objects.set(keyOf(t, obj.metadata.namespace, obj.metadata.name ?? ""), {
      resource: resourceOf(t),
      object: stored,
    });
    return clone(stored);
  }

  /** Reads an object without recording a call. */
  peek<T extends KubeObject = KubeObject>(t: ResourceType, name: string, namespace?: string): T | undefined {
    const found = this.#objects.get(keyOf(t, namespace, name));
    return found ? (clone(found.object) as T) : undefined;
  }

  /** Makes the next `verb` call on `name` fail with `error`. */
  failNext(verb: KubeVerb, name: string, error: Error): void {
    this.#failures.push({ verb, name, error });
  }

  /** The calls on one resource (`<plural>` or `<plural>.<group>`), as "verb namespace/name". */
  callsOn(resource: string): string[] {
    return this.calls.filter((c) => c.resource === resource).map((c) => `${c.verb} ${c.namespace}/${c.name}`);
  }

  /** Records the call, then answers it (or fails it, when failNext asked for that). */
  #call<T>(call: KubeCall, answer: () => T): Promise<T> {
    this.calls.push(call);
    const i = this.#failures.findIndex((f) => f.verb === call.verb && f.name === call.name);
    if (i >= 0) return Promise.reject(this.#failures.splice(i, 1)[0]!.error);
    try {
      return Promise.resolve(answer());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  apply<T extends KubeObject>(t: ResourceType, obj: KubeObject, opts: ApplyOptions): Promise<T> {
    const { name = "", namespace } = obj.metadata;
    const call: KubeCall = {
      verb: "apply",
      resource: resourceOf(t),
      namespace: namespace ?? "",
      name,
      fieldManager: opts.fieldManager,
      force: opts.force ?? true,
      ...(opts.subresource ? { subresource: opts.subresource } : {}),
    };
    return this.#call(call, () => {
      const current = this.peek(t, name, namespace);
      if (opts.subresource === "status") {
        if (!current) throw new KubeApiError(404, "NotFound", `${name} not found`, {});
        return this.seed(t, { ...current, status: clone(obj["status"]) }) as T;
      }
      const metadata = { ...current?.metadata, ...clone(obj.metadata) };
      return this.seed(t, { ...current, ...clone(obj), metadata }) as T;
    });
  }

  create<T extends KubeObject>(t: ResourceType, obj: T): Promise<T> {
    const { name = "", namespace } = obj.metadata;
    return this.#call({ verb: "create", resource: resourceOf(t), namespace: namespace ?? "", name }, () => {
      if (this.peek(t, name, namespace))
        throw new KubeApiError(409, "AlreadyExists", `${name} already exists`, {});
      return this.seed(t, obj) as T;
    });
  }

  find<T extends KubeObject>(t: ResourceType, name: string, namespace?: string): Promise<T | undefined> {
    const call: KubeCall = { verb: "find", resource: resourceOf(t), namespace: namespace ?? "", name };
    return this.#call(call, () => this.peek<T>(t, name, namespace));
  }

  delete(
    t: ResourceType,
    ref: { name: string; namespace?: string },
    opts: { propagationPolicy?: "Foreground" | "Background" | "Orphan" } = {},
  ): Promise<boolean> {
    const call: KubeCall = {
      verb: "delete",
      resource: resourceOf(t),
      namespace: ref.namespace ?? "",
      name: ref.name,
      ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
    };
    return this.#call(call, () => this.#objects.delete(keyOf(t, ref.namespace, ref.name)));
  }

  listAll<T extends KubeObject>(t: ResourceType, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const resource = resourceOf(t);
    const call: KubeCall = { verb: "listAll", resource, namespace: opts.namespace ?? "", name: "" };
    return this.#call(call, () => {
      const items = [...this.#objects.values()]
        .filter((o) => o.resource === resource)
        .filter((o) => opts.namespace === undefined || o.object.metadata.namespace === opts.namespace)
        .map((o) => clone(o.object) as T);
      return { metadata: {}, items };
    });
  }
}
