/**
 * How every check reads the customer's Azure: one request's calls share a deadline and a limit on
 * calls in flight; a 404 is something the customer must fix (NOT_FOUND, judged by the check);
 * Azure not answering in time, throttling or failing is a 503 with Retry-After, never a refusal
 * and never a pass.
 */
import type { AzureClients } from "../../azure/clients.ts";
import { classifyAzureError, type AzureError } from "../../azure/errors.ts";
import type { Logger } from "../../runtime/logger.ts";
import { CloudError, CODES, fieldErrors, type FieldError } from "../errors.ts";

/** A refusal or an outage found by the checks (a CloudError the handlers pass on as it is). */
export class AzureCheckError extends CloudError {}

/** Something Azure said is not there (404): the customer's to fix. */
export const NOT_FOUND = Symbol("not found");
export type Found<T> = T | typeof NOT_FOUND;

/** One request's checks: the clients, and the deadline and concurrency its calls share. */
export interface Run {
  clients: AzureClients;
  log: Logger;
  signal: AbortSignal;
  limit: <T>(fn: () => Promise<T>) => Promise<T>;
}

export interface RunOptions {
  clients: AzureClients;
  log: Logger;
  /** How long one request's checks may take, all calls together. */
  budgetMs: number;
  /** Azure calls in flight at once for one request. */
  concurrency: number;
}

/** Runs one request's checks; throws an AzureCheckError, 400 naming every field they refuse. */
export async function checked(opts: RunOptions, check: (run: Run) => Promise<FieldError[]>): Promise<void> {
  const run = {
    clients: opts.clients,
    log: opts.log,
    signal: AbortSignal.timeout(opts.budgetMs),
    limit: limiter(opts.concurrency),
  };
  const errors = await check(run);
  if (errors.length === 0) return;
  const refused = fieldErrors(errors);
  throw new AzureCheckError(refused.status, refused.body, refused.headers);
}

/** One Azure call: its value, NOT_FOUND on a 404, or an AzureCheckError 503 for anything else. */
export async function call<T>(run: Run, operation: string, fn: () => Promise<T>): Promise<Found<T>> {
  try {
    return await run.limit(fn);
  } catch (err) {
    const e = classifyAzureError(err, operation);
    if (e.statusCode === 404) return NOT_FOUND;
    run.log.error("Checking the customer's Azure resources failed", e);
    throw unavailable(e);
  }
}

/** A 503 that tells ARM when to try again. */
export function unavailable(e: AzureError | undefined): AzureCheckError {
  const retryAfterMs = e && "retryAfterMs" in e ? e.retryAfterMs : undefined;
  const seconds = Math.max(1, Math.ceil((retryAfterMs ?? 10_000) / 1000));
  return new AzureCheckError(
    503,
    {
      code: CODES.ServiceUnavailable,
      message: "The customer's Azure resources could not be checked right now; try again later.",
    },
    { "retry-after": String(seconds) },
  );
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Azure names compare regardless of case. */
export const sameName = (a: string | undefined, b: string): boolean => a?.toLowerCase() === b.toLowerCase();

/** Runs at most `n` of the functions given to it at once. */
function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
