/**
 * Long-running operations with a bounded wait. The SDK's poller is driven by hand: poll until done
 * or until `operationTimeoutMs` has passed. Then the poller's state is kept (by operation key) and
 * the call reports "still running"; the next call for the same key resumes polling the same
 * operation (the SDK's `resumeFrom`) instead of sending the PUT or DELETE again.
 */
import { sleep } from "../runtime/backoff.ts";
import type { AzureClients } from "./clients.ts";
import { classifyAzureError, isFailedOperation, statusCodeOf } from "./errors.ts";

/** What both the current and the legacy (arm-dns) SDK pollers offer. */
export interface PollerLite<T> {
  poll(): Promise<void>;
  isDone(): boolean;
  getResult(): T | undefined;
  toString(): string;
}

/** Starts the operation, or with `resumeFrom` picks up one started earlier. */
export type StartOperation<T> = (resumeFrom: string | undefined) => Promise<PollerLite<T>>;

export type OperationOutcome<T> = { done: true; result: T | undefined } | { done: false };

/** Starts `start` and waits for it, at most operationTimeoutMs. Errors come out classified. */
export async function runOperation<T>(
  azure: AzureClients,
  key: string,
  start: StartOperation<T>,
  what: string,
): Promise<OperationOutcome<T>> {
  let poller: PollerLite<T>;
  try {
    poller = await start(undefined);
  } catch (err) {
    throw classifyAzureError(err, what);
  }
  return waitBounded(azure, key, poller, what);
}

/**
 * Resumes the operation saved under `key`. "lost" when nothing is saved, or when the saved
 * operation cannot be polled any more (its status URL is gone): the caller reads the resource
 * and decides afresh.
 */
export async function resumeOperation<T>(
  azure: AzureClients,
  key: string,
  start: StartOperation<T>,
  what: string,
): Promise<OperationOutcome<T> | "lost"> {
  const saved = azure.pendingOperations.get(key);
  if (saved === undefined) return "lost";
  let poller: PollerLite<T>;
  try {
    poller = await start(saved);
  } catch (err) {
    const classified = classifyAzureError(err, what);
    const status = statusCodeOf(err);
    // A failed operation, or a status URL that no longer exists: forget it. Transient errors: keep it.
    if (isFailedOperation(err) || status === 404 || classified.kind !== "retryable") {
      azure.pendingOperations.delete(key);
    }
    if (status === 404) return "lost";
    throw classified;
  }
  return waitBounded(azure, key, poller, what);
}

async function waitBounded<T>(
  azure: AzureClients,
  key: string,
  poller: PollerLite<T>,
  what: string,
): Promise<OperationOutcome<T>> {
  const { operationTimeoutMs, pollIntervalMs } = azure.config;
  const deadline = Date.now() + operationTimeoutMs;
  try {
    while (!poller.isDone()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        azure.pendingOperations.set(key, poller.toString());
        return { done: false };
      }
      await sleep(Math.min(pollIntervalMs, left));
      await poller.poll();
    }
  } catch (err) {
    if (poller.isDone()) azure.pendingOperations.delete(key);
    else azure.pendingOperations.set(key, poller.toString());
    throw classifyAzureError(err, what);
  }
  azure.pendingOperations.delete(key);
  return { done: true, result: poller.getResult() };
}
