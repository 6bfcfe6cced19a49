/**
 * Long-running operations without holding the caller. The SDK's poller is driven by hand: after
 * the PUT or DELETE, poll until done or until `operationWaitMs` has passed (by default not at all).
 * Then the poller's state is kept (by operation key) and the call reports "still running"; the
 * next call for the same key resumes the same operation (the SDK's `resumeFrom`), polls it once,
 * and does not send the PUT or DELETE again. A cancelled wait keeps the poller's state the same way.
 */
import { sleep } from "../runtime/backoff.ts";
import { failpoint } from "../runtime/failpoints.ts";
import { callError, sdkCallOptions, type SdkCallOptions } from "./cancel.ts";
import type { AzureClients } from "./clients.ts";
import { classifyAzureError, isFailedOperation, statusCodeOf } from "./errors.ts";

/** What both the current and the legacy (arm-dns) SDK pollers offer. */
export interface PollerLite<T> {
  poll(options?: SdkCallOptions): Promise<void>;
  isDone(): boolean;
  getResult(): T | undefined;
  toString(): string;
}

/** Starts the operation, or with `resumeFrom` picks up one started earlier. */
export type StartOperation<T> = (
  resumeFrom: string | undefined,
  options: SdkCallOptions,
) => Promise<PollerLite<T>>;

/** One operation: how to start it, the key its poller is kept under, and the caller's signal. */
export interface Operation<T> {
  key: string;
  start: StartOperation<T>;
  /** e.g. "create public IP address rg/name", for errors. */
  what: string;
  signal?: AbortSignal | undefined;
}

export type OperationOutcome<T> = { done: true; result: T | undefined } | { done: false };

/** Starts the operation and waits for it, at most operationWaitMs. Errors come out classified. */
export async function runOperation<T>(azure: AzureClients, op: Operation<T>): Promise<OperationOutcome<T>> {
  let poller: PollerLite<T>;
  try {
    poller = await op.start(undefined, sdkCallOptions(op.signal));
  } catch (err) {
    throw callError(err, op.what, op.signal);
  }
  failpoint("azure/after-operation-started");
  return waitBounded(azure, op, poller);
}

/**
 * Resumes the operation saved under `op.key` and polls it at once (the caller's requeue was the
 * wait). "lost" when nothing is saved, or when the saved operation cannot be polled any more (its
 * status URL is gone): the caller reads the resource and decides afresh.
 */
export async function resumeOperation<T>(
  azure: AzureClients,
  op: Operation<T>,
): Promise<OperationOutcome<T> | "lost"> {
  const saved = azure.pendingOperations.get(op.key);
  if (saved === undefined) return "lost";
  let poller: PollerLite<T>;
  try {
    poller = await op.start(saved, sdkCallOptions(op.signal));
  } catch (err) {
    // Cancelled: the operation is as resumable as before.
    if (op.signal?.aborted) throw op.signal.reason;
    return forgetUnresumable(azure, op, err);
  }
  return waitBounded(azure, op, poller, { pollFirst: true });
}

/** A failed operation, or a status URL that no longer exists: forget it. Transient errors: keep it. */
function forgetUnresumable<T>(azure: AzureClients, op: Operation<T>, err: unknown): "lost" {
  const classified = classifyAzureError(err, op.what);
  const status = statusCodeOf(err);
  if (isFailedOperation(err) || status === 404 || classified.kind !== "retryable") {
    azure.pendingOperations.delete(op.key);
  }
  if (status === 404) return "lost";
  throw classified;
}

async function waitBounded<T>(
  azure: AzureClients,
  op: Operation<T>,
  poller: PollerLite<T>,
  { pollFirst = false } = {},
): Promise<OperationOutcome<T>> {
  const { operationWaitMs, pollIntervalMs } = azure.config;
  const { key, signal } = op;
  const deadline = Date.now() + operationWaitMs;
  try {
    if (pollFirst && !poller.isDone()) await poller.poll(sdkCallOptions(signal));
    while (!poller.isDone()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        azure.pendingOperations.set(key, poller.toString());
        return { done: false };
      }
      await sleep(Math.min(pollIntervalMs, left), signal);
      signal?.throwIfAborted();
      await poller.poll(sdkCallOptions(signal));
    }
  } catch (err) {
    if (poller.isDone()) azure.pendingOperations.delete(key);
    else azure.pendingOperations.set(key, poller.toString());
    throw callError(err, op.what, signal);
  }
  azure.pendingOperations.delete(key);
  return { done: true, result: poller.getResult() };
}
