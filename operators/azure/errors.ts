/**
 * Every error out of the Azure SDKs, sorted into what the controller does with it:
 * - `AzureRetryableError`: throttling (429, with the Retry-After the service asked for), 5xx,
 *   network errors, timeouts, token service outages. Requeue with backoff.
 * - `AzureUserError`: the request cannot succeed until someone changes something (quota, a bad
 *   reference, missing permissions, a resource owned by another cluster, 400s in general). It
 *   carries ARM's `code` and `message` for a condition; requeue slowly, do not storm.
 * - `AzureConflictError`: 409/412, the state changed under us. Re-read and try again soon.
 */

import { inspect } from "node:util";

export type AzureErrorKind = "retryable" | "user" | "conflict";

export interface AzureErrorDetails {
  /** ARM's error code (e.g. QuotaExceeded), an OAuth2 error (invalid_client), or ours. */
  code: string;
  /** ARM's message, unchanged: fit for a condition. */
  message: string;
  /** HTTP status, when there was a response. */
  statusCode?: number;
  /** What we were doing, e.g. "create Microsoft.Network/publicIPAddresses rg/name". */
  operation?: string;
  cause?: unknown;
}

abstract class AzureErrorBase extends Error {
  abstract readonly kind: AzureErrorKind;
  readonly code: string;
  readonly statusCode: number | undefined;
  readonly operation: string | undefined;

  constructor(d: AzureErrorDetails) {
    super(d.message, d.cause === undefined ? undefined : { cause: d.cause });
    this.code = d.code;
    this.statusCode = d.statusCode;
    this.operation = d.operation;
  }

  /**
   * One line. The SDK's RestError in `cause` prints the whole request, TLS settings (hundreds of
   * root certificates) included; only its name and message are shown here.
   */
  [inspect.custom](): string {
    const status = this.statusCode === undefined ? "" : ` ${this.statusCode}`;
    const op = this.operation ? ` (${this.operation})` : "";
    const cause = this.cause instanceof Error ? `; cause: ${this.cause.name}: ${this.cause.message}` : "";
    return `${this.name} [${this.kind}${status} ${this.code}]${op}: ${this.message}${cause}`;
  }
}

/** Retrying as is will not help; someone has to fix something. */
export class AzureUserError extends AzureErrorBase {
  readonly kind = "user";
  constructor(d: AzureErrorDetails) {
    super(d);
    this.name = "AzureUserError";
  }
}

/** Transient: try again, no sooner than retryAfterMs when the service said so. */
export class AzureRetryableError extends AzureErrorBase {
  readonly kind = "retryable";
  /** From Retry-After / retry-after-ms, when the service sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(d: AzureErrorDetails & { retryAfterMs?: number }) {
    super(d);
    this.name = "AzureRetryableError";
    this.retryAfterMs = d.retryAfterMs;
  }
}

/** 409/412: something changed concurrently; re-read and decide again. */
export class AzureConflictError extends AzureErrorBase {
  readonly kind = "conflict";
  constructor(d: AzureErrorDetails) {
    super(d);
    this.name = "AzureConflictError";
  }
}

export type AzureError = AzureUserError | AzureRetryableError | AzureConflictError;

/** Our code for a resource that exists with someone else's owner tag. */
export const RESOURCE_OWNED_BY_ANOTHER = "ResourceOwnedByAnother";

export function isAzureError(err: unknown): err is AzureError {
  return (
    err instanceof AzureUserError || err instanceof AzureRetryableError || err instanceof AzureConflictError
  );
}

/** Network failures worth retrying (Node and undici codes, and the SDK's own). */
export const NETWORK_ERROR_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "REQUEST_SEND_ERROR",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** 4xx codes ARM uses for transient states. */
const RETRYABLE_CODES = new Set([
  "RetryableError",
  "AnotherOperationInProgress",
  "ReferencedResourceNotProvisioned",
  "CanceledAndSupersededDueToAnotherOperation",
  "TooManyRequests",
  "ExpiredAuthenticationToken",
]);

/** 409s that no amount of re-reading fixes. */
const USER_CONFLICT_CODES = new Set([
  "MissingSubscriptionRegistration",
  "InvalidResourceGroupLocation",
  "ScopeLocked",
  "SubscriptionNotRegistered",
  "DisallowedProvider",
]);

/** Codes of failed long-running operations that are the service's trouble, not the user's. */
const RETRYABLE_OPERATION_CODES = /internal|retryable|timeout|canceled|preempted|unavailable/i;

/** Retry-After in ms from headers: retry-after-ms, x-ms-retry-after-ms, or Retry-After (seconds or a date). */
export function retryAfterMs(
  get: (name: string) => string | undefined,
  now = Date.now(),
): number | undefined {
  for (const name of ["retry-after-ms", "x-ms-retry-after-ms"]) {
    const ms = Number(get(name));
    if (get(name) !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  }
  const value = get("retry-after");
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

interface RestErrorLike {
  name?: unknown;
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
  response?: { headers?: { get?: (name: string) => string | undefined } };
}

/** Sorts any error thrown by an SDK call (or by our code around it) into an AzureError. */
export function classifyAzureError(err: unknown, operation?: string): AzureError {
  if (isAzureError(err)) return err;
  const e = (typeof err === "object" && err !== null ? err : {}) as RestErrorLike;
  const name = typeof e.name === "string" ? e.name : "";
  const message = typeof e.message === "string" ? e.message : String(err);
  const base = { message, ...(operation ? { operation } : {}), cause: err };
  if (name === "AbortError") return new AzureRetryableError({ ...base, code: "RequestTimeout" });
  if (IDENTITY_ERRORS.has(name)) return classifyIdentityError(name, message, base);
  if (typeof e.statusCode === "number") return classifyHttp(e, e.statusCode, base);
  return classifyOther(typeof e.code === "string" ? e.code : undefined, base);
}

/** No HTTP status: a network error, a failed long-running operation, or something unexpected. */
function classifyOther(code: string | undefined, base: Base): AzureError {
  if (code !== undefined && NETWORK_ERROR_CODES.has(code)) return new AzureRetryableError({ ...base, code });
  const lro = failedOperation(base.message);
  if (lro) {
    const d = { ...base, code: lro.code, message: lro.message };
    return RETRYABLE_OPERATION_CODES.test(lro.code) ? new AzureRetryableError(d) : new AzureUserError(d);
  }
  // Unknown failures (our bugs included) are retried with backoff rather than reported as the user's.
  return new AzureRetryableError({ ...base, code: code ?? "Unknown" });
}

type Base = Omit<AzureErrorDetails, "code">;

function classifyHttp(e: RestErrorLike, status: number, base: Base): AzureError {
  const code = typeof e.code === "string" && e.code !== "" ? e.code : `Http${status}`;
  const d = { ...base, code, statusCode: status };
  const get = (n: string): string | undefined => e.response?.headers?.get?.(n) ?? undefined;
  if (status === 429 || status === 408 || status >= 500 || RETRYABLE_CODES.has(code)) {
    const after = retryAfterMs(get);
    return new AzureRetryableError(after === undefined ? d : { ...d, retryAfterMs: after });
  }
  if ((status === 409 || status === 412) && !USER_CONFLICT_CODES.has(code)) return new AzureConflictError(d);
  return new AzureUserError(d);
}

const IDENTITY_ERRORS = new Set([
  "AuthenticationError",
  "AuthenticationRequiredError",
  "CredentialUnavailableError",
]);
/** OAuth2 errors that mean the identity is misconfigured (wrong secret, unknown app or tenant). */
const OAUTH_CONFIG_ERRORS = new Set([
  "invalid_client",
  "unauthorized_client",
  "invalid_tenant",
  "invalid_request",
  "invalid_scope",
  "invalid_grant",
  "unsupported_grant_type",
]);

/**
 * @azure/identity reports token failures as AuthenticationRequiredError (or AuthenticationError)
 * whose message starts with the OAuth2 error, then "Error(s): <AADSTS codes> … Description: …".
 */
function classifyIdentityError(name: string, message: string, base: Base): AzureError {
  const oauth = /^([a-z_]+):/.exec(message)?.[1];
  const description = /Description: (.*?)(?: Trace ID:|$)/s.exec(message)?.[1] ?? message;
  if (oauth !== undefined && OAUTH_CONFIG_ERRORS.has(oauth)) {
    return new AzureUserError({ ...base, code: oauth, message: description });
  }
  if (name === "CredentialUnavailableError" && !/endpoints_resolution_error|network/i.test(message)) {
    return new AzureUserError({ ...base, code: "CredentialUnavailable" });
  }
  return new AzureRetryableError({ ...base, code: oauth ?? "TokenRequestFailed" });
}

const FAILED_OPERATION = "The long-running operation has failed";

/** Whether `err` is the SDK poller's report of an operation that ended Failed. */
export function isFailedOperation(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith(FAILED_OPERATION);
}

/** core-lro reports a Failed operation as "The long-running operation has failed. <code>. <message>". */
function failedOperation(message: string): { code: string; message: string } | undefined {
  const m = /^The long-running operation has failed\. ([^.\s]+)\. (.*)$/s.exec(message);
  return m?.[1] && m[2] !== undefined ? { code: m[1], message: m[2] } : undefined;
}

/** HTTP status of an SDK error, if it carries one. */
export function statusCodeOf(err: unknown): number | undefined {
  if (isAzureError(err)) return err.statusCode;
  const status = typeof err === "object" && err !== null ? (err as RestErrorLike).statusCode : undefined;
  return typeof status === "number" ? status : undefined;
}
