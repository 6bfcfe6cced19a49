/**
 * The shape every ensure and delete follows. Read first; refuse what belongs to someone else;
 * write only when the resource is missing or differs; start long-running operations and poll them
 * on later calls (resumed, never sent twice); treat 404 on delete as done. The resource-specific parts
 * (how to read, compare, write) come in a spec; each of its SDK calls is handed the options that
 * carry the spec's signal.
 */
import { callError, sdkCallOptions, type SdkCallOptions } from "./cancel.ts";
import type { AzureClients } from "./clients.ts";
import { statusCodeOf } from "./errors.ts";
import { resumeOperation, runOperation, type PollerLite, type StartOperation } from "./lro.ts";
import { assertOwned, isOwnedBy, type Owner, type Tags } from "./ownership.ts";

/** The call finished its part: `changed` says whether it wrote anything. */
export interface Ready<T> {
  done: true;
  changed: boolean;
  value: T;
}

/** An operation is still running in Azure; call again after retryAfterMs. */
export interface InProgress {
  done: false;
  retryAfterMs: number;
  /** What is being waited for, for logs and conditions. */
  reason: string;
}

export type Outcome<T> = Ready<T> | InProgress;

/** What a delete found: it deleted the resource, it was already gone, or it is not ours (left alone). */
export type DeleteResult = "deleted" | "absent" | "ownedByAnother";

const TERMINAL_STATES = ["succeeded", "failed", "canceled"];

/** A provisioning state that means an operation on the resource is still running. */
export function isTransitioning(state: string | undefined): boolean {
  return state !== undefined && !TERMINAL_STATES.includes(state.toLowerCase());
}

/** The options of a long-running call: poll interval, a saved poller to resume, the signal. */
export function lroOptions(
  azure: AzureClients,
  resumeFrom: string | undefined,
  options: SdkCallOptions,
): SdkCallOptions & { updateIntervalInMs: number; resumeFrom?: string } {
  return {
    updateIntervalInMs: azure.config.pollIntervalMs,
    ...(resumeFrom ? { resumeFrom } : {}),
    ...options,
  };
}

export function ready<T>(changed: boolean, value: T): Ready<T> {
  return { done: true, changed, value };
}

/** A resource is changing through an operation that is not ours (or no longer ours to poll). */
export function inProgress(azure: AzureClients, reason: string): InProgress {
  return { done: false, retryAfterMs: azure.config.inProgressRequeueMs, reason };
}

/** Our own operation runs: the next call polls it, after the poll interval. */
export function polling(azure: AzureClients, reason: string): InProgress {
  return { done: false, retryAfterMs: azure.config.pollIntervalMs, reason };
}

/** An SDK call, given the options that carry the caller's signal. */
export type SdkCall<T> = (options: SdkCallOptions) => Promise<T>;

/** Runs an SDK call, classifying what it throws (a cancelled call rejects with the signal's reason). */
export async function call<T>(what: string, fn: SdkCall<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await fn(sdkCallOptions(signal));
  } catch (err) {
    throw callError(err, what, signal);
  }
}

/** GETs a resource; undefined when ARM says 404 (the resource, or its group or parent, is missing). */
export async function find<T>(what: string, fn: SdkCall<T>, signal?: AbortSignal): Promise<T | undefined> {
  try {
    return await fn(sdkCallOptions(signal));
  } catch (err) {
    if (!signal?.aborted && statusCodeOf(err) === 404) return undefined;
    throw callError(err, `read ${what}`, signal);
  }
}

interface Common<R> {
  azure: AzureClients;
  /** e.g. "public IP address rg/name", for messages and conditions. */
  what: string;
  owner: Owner;
  /** Cancels the ensure or delete: every SDK call and every wait. */
  signal?: AbortSignal | undefined;
  get: SdkCall<R>;
  /** The owner tags (or a record set's metadata). */
  tags: (r: R) => Tags;
  /** provisioningState, when the resource has one. */
  state?: (r: R) => string | undefined;
}

export interface SyncSpec<R, T> extends Common<R> {
  /** Whether the existing resource already is what we want. */
  matches: (r: R) => boolean;
  put: (existing: R | undefined, options: SdkCallOptions) => Promise<R>;
  value: (r: R) => T;
  /**
   * The caller has never seen the resource made (its step was never ready): write first, on
   * condition that nothing is there (`put` without an existing resource sends If-None-Match: *),
   * and read only when ARM answers 412. Only for a `put` that sends that condition.
   */
  createFirst?: boolean | undefined;
}

/** Ensure for synchronous writes (resource groups, DNS zones and record sets). */
export async function ensureSync<R, T>(spec: SyncSpec<R, T>): Promise<Ready<T>> {
  if (spec.createFirst) {
    const created = await createIfAbsent(spec);
    if (created !== undefined) return ready(true, spec.value(created));
  }
  const existing = await find(spec.what, spec.get, spec.signal);
  if (existing !== undefined) {
    assertOwned(spec.tags(existing), spec.owner, spec.what);
    if (spec.matches(existing)) return ready(false, spec.value(existing));
  }
  const verb = existing ? "update" : "create";
  const written = await call(`${verb} ${spec.what}`, (o) => spec.put(existing, o), spec.signal);
  return ready(true, spec.value(written));
}

/**
 * A create conditional on absence: the resource, or undefined when one exists already (412), which
 * the read-first path then checks for its owner. A new cluster's DNS steps save their read this
 * way (the read answered 404 for each of them).
 */
async function createIfAbsent<R, T>(spec: SyncSpec<R, T>): Promise<R | undefined> {
  try {
    return await spec.put(undefined, sdkCallOptions(spec.signal));
  } catch (err) {
    if (!spec.signal?.aborted && statusCodeOf(err) === 412) return undefined;
    throw callError(err, `create ${spec.what}`, spec.signal);
  }
}

export interface LroSpec<R, T> extends Common<R> {
  matches: (r: R) => boolean;
  /** Identifies the operation across calls: the resource id. */
  key: string;
  begin: (
    existing: R | undefined,
    resumeFrom: string | undefined,
    options: SdkCallOptions,
  ) => Promise<PollerLite<R>>;
  /** The value once done; undefined while the resource is not usable yet. */
  value: (r: R) => T | undefined;
}

/**
 * Names a saved operation: what it does, on which resource, for which owner (a new cluster reusing
 * the names of a deleted one must not resume the old one's operation).
 */
function operationKey(verb: "put" | "delete", owner: Owner, resourceId: string): string {
  return `${verb} ${owner.id} ${resourceId.toLowerCase()}`;
}

/** Ensure for resources written by a long-running PUT (public IPs, load balancers). */
export async function ensureLro<R, T>(spec: LroSpec<R, T>): Promise<Outcome<T>> {
  const key = operationKey("put", spec.owner, spec.key);
  const resumed = await resumePut(spec, key);
  if (resumed) return resumed;
  const existing = await find(spec.what, spec.get, spec.signal);
  if (existing !== undefined) {
    assertOwned(spec.tags(existing), spec.owner, spec.what);
    const state = spec.state?.(existing);
    if (isTransitioning(state)) return inProgress(spec.azure, `${spec.what} is changing`);
    if (state?.toLowerCase() !== "failed" && spec.matches(existing)) return readyValue(spec, false, existing);
  }
  const verb = existing ? "update" : "create";
  const outcome = await runOperation(spec.azure, {
    key,
    start: (from, o) => spec.begin(existing, from, o),
    what: `${verb} ${spec.what}`,
    signal: spec.signal,
  });
  return finishPut(spec, outcome.done, outcome.done ? outcome.result : undefined);
}

/** The outcome of a PUT saved by an earlier call, or undefined to read the resource and decide afresh. */
async function resumePut<R, T>(spec: LroSpec<R, T>, key: string): Promise<Outcome<T> | undefined> {
  const resumed = await resumeOperation(spec.azure, {
    key,
    start: (from, o) => spec.begin(undefined, from, o),
    what: `create ${spec.what}`,
    signal: spec.signal,
  });
  if (resumed === "lost") return undefined;
  if (!resumed.done) return polling(spec.azure, `waiting for ${spec.what}`);
  const r = resumed.result ?? (await call(`read ${spec.what}`, spec.get, spec.signal));
  // The earlier write is done; if what we want changed meanwhile, carry on and write again.
  return spec.matches(r) ? readyValue(spec, true, r) : undefined;
}

async function finishPut<R, T>(
  spec: LroSpec<R, T>,
  done: boolean,
  result: R | undefined,
): Promise<Outcome<T>> {
  if (!done) return polling(spec.azure, `waiting for ${spec.what}`);
  const r = result ?? (await call(`read ${spec.what}`, spec.get, spec.signal));
  return readyValue(spec, true, r);
}

function readyValue<R, T>(spec: LroSpec<R, T>, changed: boolean, r: R): Outcome<T> {
  const value = spec.value(r);
  return value === undefined
    ? inProgress(spec.azure, `${spec.what} is not ready yet`)
    : ready(changed, value);
}

export interface DeleteSpec<R> extends Common<R> {
  /** A synchronous DELETE (DNS record sets), given what the GET returned. */
  remove?: (existing: R, options: SdkCallOptions) => Promise<unknown>;
  /** A long-running DELETE, keyed by the resource id. */
  begin?: { key: string; start: StartOperation<unknown> };
}

/** Deletes what we own; 404 is success; someone else's resource is left alone. */
export async function deleteOwned<R>(spec: DeleteSpec<R>): Promise<Outcome<DeleteResult>> {
  const key = spec.begin ? operationKey("delete", spec.owner, spec.begin.key) : "";
  if (spec.begin) {
    const op = { key, start: spec.begin.start, what: `delete ${spec.what}`, signal: spec.signal };
    const resumed = await resumeOperation(spec.azure, op);
    if (resumed !== "lost") return deleted(spec, resumed.done);
  }
  const existing = await find(spec.what, spec.get, spec.signal);
  if (existing === undefined) return ready(false, "absent");
  if (!isOwnedBy(spec.tags(existing), spec.owner)) return ready(false, "ownedByAnother");
  if (isTransitioning(spec.state?.(existing))) return inProgress(spec.azure, `${spec.what} is changing`);
  try {
    return await sendDelete(spec, existing, key);
  } catch (err) {
    if (statusCodeOf(err) === 404) return ready(false, "absent");
    throw err;
  }
}

async function sendDelete<R>(spec: DeleteSpec<R>, existing: R, key: string): Promise<Outcome<DeleteResult>> {
  const begin = spec.begin;
  if (!begin) {
    await call(`delete ${spec.what}`, (o) => spec.remove?.(existing, o) ?? Promise.resolve(), spec.signal);
    return ready(true, "deleted");
  }
  const op = { key, start: begin.start, what: `delete ${spec.what}`, signal: spec.signal };
  const outcome = await runOperation(spec.azure, op);
  // A PUT of ours that never finished while we waited is moot now.
  spec.azure.pendingOperations.delete(operationKey("put", spec.owner, begin.key));
  return deleted(spec, outcome.done);
}

function deleted<R>(spec: DeleteSpec<R>, done: boolean): Outcome<DeleteResult> {
  return done ? ready(true, "deleted") : polling(spec.azure, `deleting ${spec.what}`);
}
