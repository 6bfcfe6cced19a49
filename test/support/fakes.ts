/**
 * Test doubles for reconcilers built without an apiserver or Azure: a writer that records what a
 * reconciler wrote (and keeps it, so a second reconcile sees the first one's result), an event
 * recorder that keeps the events, a scripted ClusterInfrastructure that answers each step as a
 * test says and counts the calls, and in-memory blobs and signing keys for the OIDC issuer.
 */
import type {
  ClusterInfraSpec,
  ClusterInfrastructure,
  InfraOptions,
  InfraResult,
  RecordAddresses,
} from "../../operators/cluster/infrastructure.ts";
import type { BlobStore, BlobStoreError } from "../../operators/azure/blob.ts";
import {
  newSigningKey,
  type KeyOwner,
  type KeyringStore,
  type SigningKeyStore,
  type StoredKeyring,
} from "../../operators/cluster/oidc.ts";
import type { SigningKeyring } from "../../operators/cluster/signing-keyring.ts";
import type { StepState } from "../../operators/hcp/steps.ts";
import type { ObjectWriter } from "../../operators/runtime/apply.ts";
import type { EventSeverity } from "../../operators/runtime/events.ts";
import type { KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import type { ReconcileContext } from "../../operators/runtime/controller.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";

export interface Write {
  verb: "apply" | "status" | "addFinalizer" | "removeFinalizer" | "delete";
  kind: string;
  name: string;
  namespace?: string;
  body?: unknown;
}

const objectKey = (type: ResourceType, r: { name?: string; namespace?: string }): string =>
  `${type.plural}/${r.namespace ?? ""}/${r.name ?? ""}`;

/** Records every write; applied objects get generation 1 and bump it when their body changes. */
export class RecordingWriter implements ObjectWriter {
  readonly writes: Write[] = [];
  readonly #generations = new Map<string, { body: string; generation: number }>();
  readonly #seeded = new Set<string>();

  async applyIfChanged<T extends KubeObject>(type: ResourceType, obj: KubeObject): Promise<T | undefined> {
    const key = objectKey(type, obj.metadata);
    const body = JSON.stringify(obj);
    const last = this.#generations.get(key);
    if (last?.body === body) return undefined;
    const generation = (last?.generation ?? 0) + 1;
    this.#generations.set(key, { body, generation });
    this.writes.push({ verb: "apply", ...ref(type, obj), body: obj });
    return Promise.resolve({ ...obj, metadata: { ...obj.metadata, generation } } as T);
  }

  async applyStatus<T extends KubeObject>(
    type: ResourceType,
    current: KubeObject,
    status: unknown,
  ): Promise<T | undefined> {
    if (JSON.stringify(current["status"]) === JSON.stringify(status)) return undefined;
    this.writes.push({ verb: "status", ...ref(type, current), body: status });
    return Promise.resolve({ ...current, status } as unknown as T);
  }

  async addFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (obj.metadata.finalizers?.includes(finalizer)) return false;
    this.writes.push({ verb: "addFinalizer", ...ref(type, obj), body: finalizer });
    return Promise.resolve(true);
  }

  async removeFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): Promise<boolean> {
    if (!obj.metadata.finalizers?.includes(finalizer)) return false;
    this.writes.push({ verb: "removeFinalizer", ...ref(type, obj), body: finalizer });
    return Promise.resolve(true);
  }

  /**
   * Resolves with whether the object is there: one this writer applied and `vanish` did not take
   * away (a finalizer holds a deleted object until its owner lets go), or one `seed` put there.
   */
  async delete(type: ResourceType, r: { name: string; namespace?: string }): Promise<boolean> {
    this.writes.push({ verb: "delete", kind: type.kind, name: r.name, namespace: r.namespace });
    return Promise.resolve(this.#generations.has(objectKey(type, r)) || this.#seeded.has(objectKey(type, r)));
  }

  /** An object on the server this writer did not write (a delete finds it). */
  seed(type: ResourceType, r: { name?: string; namespace?: string }): void {
    this.#seeded.add(objectKey(type, r));
  }

  /** The object is gone from the server (its finalizers released), so a delete no longer finds it. */
  vanish(type: ResourceType, r: { name?: string; namespace?: string }): void {
    this.#generations.delete(objectKey(type, r));
    this.#seeded.delete(objectKey(type, r));
  }

  /** The writes of one verb (and kind). */
  of(verb: Write["verb"], kind?: string): Write[] {
    return this.writes.filter((w) => w.verb === verb && (kind === undefined || w.kind === kind));
  }

  /** The last status written. */
  lastStatus<S>(): S | undefined {
    return this.of("status").at(-1)?.body as S | undefined;
  }
}

function ref(type: ResourceType, obj: KubeObject): { kind: string; name: string; namespace?: string } {
  return { kind: type.kind, name: obj.metadata.name ?? "", namespace: obj.metadata.namespace };
}

export interface RecordedEvent {
  object: string;
  type: EventSeverity;
  reason: string;
  message: string;
}

export class RecordingEvents {
  readonly events: RecordedEvent[] = [];

  async record(
    obj: KubeObject,
    input: { type: EventSeverity; reason: string; message: string },
  ): Promise<void> {
    const { type, reason, message } = input;
    this.events.push({ object: obj.metadata.name ?? "", type, reason, message });
    return Promise.resolve();
  }

  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}

export type InfraStep = keyof Omit<ClusterInfrastructure, never>;

const READY: StepState = { state: "ready", message: "as expected" };

/**
 * Answers each infrastructure step from a script (ready by default), counts calls per step, and
 * gives the ingress an address and the zone name servers once they are ready.
 */
export class ScriptedInfra implements ClusterInfrastructure {
  readonly calls: Partial<Record<InfraStep, number>> = {};
  readonly script: Partial<Record<InfraStep, StepState>> = {};
  /** The signal each call was given, in call order. */
  readonly signals: Array<AbortSignal | undefined> = [];

  #answer(step: InfraStep, opts?: InfraOptions): InfraResult {
    this.signals.push(opts?.signal);
    this.calls[step] = (this.calls[step] ?? 0) + 1;
    return { step: this.script[step] ?? READY };
  }

  ensureResourceGroup(_spec: ClusterInfraSpec, opts?: InfraOptions): Promise<InfraResult> {
    return Promise.resolve(this.#answer("ensureResourceGroup", opts));
  }

  ensureDnsZone(
    _spec: ClusterInfraSpec,
    opts?: InfraOptions,
  ): Promise<InfraResult & { nameServers?: string[] }> {
    const r = this.#answer("ensureDnsZone", opts);
    return Promise.resolve(r.step.state === "ready" ? { ...r, nameServers: ["ns1.example.net"] } : r);
  }

  ensureDelegation(
    _spec: ClusterInfraSpec,
    _nameServers: string[],
    opts?: InfraOptions,
  ): Promise<InfraResult> {
    return Promise.resolve(this.#answer("ensureDelegation", opts));
  }

  /** The API at 20.0.0.1; the ingress there too (Public), at 10.0.0.4 (Private), or nowhere (Disabled). */
  ensureIngress(spec: ClusterInfraSpec, opts?: InfraOptions): Promise<InfraResult> {
    const r = this.#answer("ensureIngress", opts);
    if (r.step.state !== "ready") return Promise.resolve(r);
    const ingressIp = { Public: "20.0.0.1", Private: "10.0.0.4", Disabled: undefined }[spec.ingress.type];
    return Promise.resolve({ ...r, apiIp: "20.0.0.1", ...(ingressIp ? { ingressIp } : {}) });
  }

  /** Where each call asked the records to point, in call order. */
  readonly recordAddresses: RecordAddresses[] = [];

  ensureRecords(
    _spec: ClusterInfraSpec,
    addresses: RecordAddresses,
    opts?: InfraOptions,
  ): Promise<InfraResult> {
    this.recordAddresses.push(addresses);
    return Promise.resolve(this.#answer("ensureRecords", opts));
  }

  deleteAll(_spec: ClusterInfraSpec, opts?: InfraOptions): Promise<InfraResult> {
    return Promise.resolve(this.#answer("deleteAll", opts));
  }

  total(): number {
    return Object.values(this.calls).reduce((a, b) => a + (b ?? 0), 0);
  }
}

/** A reconcile context for calling a reconciler or a phase directly. */
export function testContext(signal: AbortSignal = new AbortController().signal): ReconcileContext {
  return { signal, log: silentLogger };
}

/** Blobs in memory, with the failure a test sets (thrown on every call until cleared). */
export class MemoryBlobStore implements BlobStore {
  readonly location = "https://storage.test/$web";
  readonly blobs = new Map<string, string>();
  readonly calls: Array<{ verb: "read" | "write" | "remove"; name: string }> = [];
  failure: BlobStoreError | undefined;

  read(name: string): Promise<string | undefined> {
    return this.#call("read", name, () => this.blobs.get(name));
  }

  write(name: string, body: string): Promise<void> {
    return this.#call("write", name, () => void this.blobs.set(name, body));
  }

  remove(name: string): Promise<boolean> {
    return this.#call("remove", name, () => this.blobs.delete(name));
  }

  async #call<T>(verb: "read" | "write" | "remove", name: string, run: () => T): Promise<T> {
    this.calls.push({ verb, name });
    await Promise.resolve();
    if (this.failure) throw this.failure;
    return run();
  }
}

/** One RSA key for every test that needs one (making a key costs tens of milliseconds). */
let testKey: Promise<string> | undefined;

/**
 * Signing keys in memory; every cluster gets the one test key. Counts what it made and removed.
 * `keys` holds each cluster's active key; `rings` the whole keyring, replaced as the Secret is,
 * with a version that a replace must name.
 */
export class MemorySigningKeys implements SigningKeyStore, KeyringStore {
  readonly keys = new Map<string, string>();
  readonly rings = new Map<string, StoredKeyring>();
  made = 0;
  removed = 0;
  /** Replaces that lose a race, as if another writer came first, before one lands. */
  conflicts = 0;

  async ensure(owner: KeyOwner): Promise<SigningKeyring> {
    const known = this.rings.get(owner.uid);
    if (known) return known.ring;
    const key = await (testKey ??= newSigningKey());
    this.made++;
    this.#store(owner, { active: key, retired: [] });
    return { active: key, retired: [] };
  }

  read(owner: KeyOwner): Promise<StoredKeyring | undefined> {
    return Promise.resolve(this.rings.get(owner.uid));
  }

  replace(owner: KeyOwner, ring: SigningKeyring, version: string): Promise<boolean> {
    if (this.conflicts > 0) {
      this.conflicts--;
      return Promise.resolve(false);
    }
    if (this.rings.get(owner.uid)?.version !== version) return Promise.resolve(false);
    this.#store(owner, ring);
    return Promise.resolve(true);
  }

  #store(owner: KeyOwner, ring: SigningKeyring): void {
    const version = String(Number(this.rings.get(owner.uid)?.version ?? "0") + 1);
    this.rings.set(owner.uid, { ring, version });
    this.keys.set(owner.uid, ring.active);
  }

  remove(owner: KeyOwner): Promise<boolean> {
    this.removed++;
    this.rings.delete(owner.uid);
    return Promise.resolve(this.keys.delete(owner.uid));
  }
}
