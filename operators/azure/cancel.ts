/**
 * Cancellation. Every ensure and delete takes the reconcile's signal; each SDK call gets it as the
 * SDK's `abortSignal` (the request in flight, token requests and retry waits included) and the
 * poll loop of a long-running operation ends its wait at once. A cancelled call rejects with the
 * signal's reason, not an AzureError: nothing failed, the caller stopped asking.
 */
import { classifyAzureError } from "./errors.ts";

/** The options every ensure and delete takes. */
export interface AzureCallOptions {
  signal?: AbortSignal;
  /**
   * The resource was never seen made by this caller: an ensure that can create on condition of
   * absence (DNS zones and record sets) writes first and reads only if one exists.
   */
  createFirst?: boolean;
}

/** The options every SDK call here is given (the SDKs' OperationOptions spelling). */
export interface SdkCallOptions {
  abortSignal?: AbortSignal;
}

export function sdkCallOptions(signal: AbortSignal | undefined): SdkCallOptions {
  return signal ? { abortSignal: signal } : {};
}

/** What a failed call rejects with: the signal's reason once it aborted, else the classified error. */
export function callError(err: unknown, what: string, signal: AbortSignal | undefined): unknown {
  return signal?.aborted ? signal.reason : classifyAzureError(err, what);
}
