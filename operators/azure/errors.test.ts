import { describe, expect, it } from "vitest";
import {
  AzureConflictError,
  AzureRetryableError,
  AzureUserError,
  classifyAzureError,
  retryAfterMs,
  type AzureErrorKind,
} from "./errors.ts";

/** What @azure/core-client throws for an ARM error response. */
function restError(statusCode: number, code: string, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`message of ${code}`), {
    name: "RestError",
    statusCode,
    code,
    response: { headers: { get: (name: string) => headers[name.toLowerCase()] } },
  });
}

describe("classifyAzureError", () => {
  it.each<[string, unknown, AzureErrorKind, string]>([
    ["429", restError(429, "TooManyRequests"), "retryable", "TooManyRequests"],
    ["500", restError(500, "InternalServerError"), "retryable", "InternalServerError"],
    ["503", restError(503, "ServiceUnavailable"), "retryable", "ServiceUnavailable"],
    ["408", restError(408, "RequestTimeout"), "retryable", "RequestTimeout"],
    ["quota", restError(400, "QuotaExceeded"), "user", "QuotaExceeded"],
    ["bad reference", restError(400, "InvalidResourceReference"), "user", "InvalidResourceReference"],
    ["forbidden", restError(403, "AuthorizationFailed"), "user", "AuthorizationFailed"],
    ["missing parent", restError(404, "ResourceGroupNotFound"), "user", "ResourceGroupNotFound"],
    ["409", restError(409, "Conflict"), "conflict", "Conflict"],
    ["412", restError(412, "PreconditionFailed"), "conflict", "PreconditionFailed"],
    ["409 that re-reading cannot fix", restError(409, "ScopeLocked"), "user", "ScopeLocked"],
    [
      "transient 4xx code",
      restError(409, "AnotherOperationInProgress"),
      "retryable",
      "AnotherOperationInProgress",
    ],
    [
      "expired token",
      restError(401, "ExpiredAuthenticationToken"),
      "retryable",
      "ExpiredAuthenticationToken",
    ],
    ["bad token", restError(401, "AuthenticationFailed"), "user", "AuthenticationFailed"],
    [
      "network error",
      Object.assign(new Error("connect ECONNREFUSED"), { name: "RestError", code: "ECONNREFUSED" }),
      "retryable",
      "ECONNREFUSED",
    ],
    [
      "request timeout",
      Object.assign(new Error("aborted"), { name: "AbortError" }),
      "retryable",
      "RequestTimeout",
    ],
    [
      "failed operation, user's",
      new Error("The long-running operation has failed. InvalidSubnet. The subnet is full."),
      "user",
      "InvalidSubnet",
    ],
    [
      "failed operation, service's",
      new Error("The long-running operation has failed. InternalServerError. Try again."),
      "retryable",
      "InternalServerError",
    ],
    [
      "wrong client secret",
      Object.assign(
        new Error(
          "invalid_client: Error(s): 7000215 - Timestamp: t - Description: AADSTS7000215: Invalid client secret provided. Trace ID: x",
        ),
        { name: "AuthenticationRequiredError" },
      ),
      "user",
      "invalid_client",
    ],
    [
      "token service down",
      Object.assign(new Error("endpoints_resolution_error: see docs"), {
        name: "CredentialUnavailableError",
      }),
      "retryable",
      "endpoints_resolution_error",
    ],
    [
      "no credential configured",
      Object.assign(new Error("EnvironmentCredential is unavailable"), {
        name: "CredentialUnavailableError",
      }),
      "user",
      "CredentialUnavailable",
    ],
    ["anything else", new TypeError("x is undefined"), "retryable", "Unknown"],
  ])("%s", (_what, err, kind, code) => {
    const classified = classifyAzureError(err, "create thing");
    expect(classified.kind).toBe(kind);
    expect(classified.code).toBe(code);
    expect(classified.operation).toBe("create thing");
    expect(classified.cause).toBe(err);
  });

  it("keeps ARM's message for a user error", () => {
    const err = classifyAzureError(restError(400, "QuotaExceeded"));
    expect(err).toBeInstanceOf(AzureUserError);
    expect(err.message).toBe("message of QuotaExceeded");
    expect(err.statusCode).toBe(400);
  });

  it("takes the AADSTS description as the message of an identity error", () => {
    const err = classifyAzureError(
      Object.assign(
        new Error(
          "invalid_client: Error(s): 7000215 - Description: AADSTS7000215: Invalid client secret provided. Trace ID: x",
        ),
        { name: "AuthenticationRequiredError" },
      ),
    );
    expect(err.message).toBe("AADSTS7000215: Invalid client secret provided.");
  });

  it("carries Retry-After of a throttled response", () => {
    const err = classifyAzureError(restError(429, "TooManyRequests", { "retry-after": "17" }));
    expect(err).toBeInstanceOf(AzureRetryableError);
    expect((err as AzureRetryableError).retryAfterMs).toBe(17_000);
  });

  it("returns an already classified error unchanged", () => {
    const err = new AzureConflictError({ code: "Conflict", message: "m" });
    expect(classifyAzureError(err)).toBe(err);
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it.each<[string, Record<string, string>, number | undefined]>([
    ["none", {}, undefined],
    ["seconds", { "retry-after": "3" }, 3000],
    ["zero seconds", { "retry-after": "0" }, 0],
    ["retry-after-ms wins", { "retry-after-ms": "250", "retry-after": "3" }, 250],
    ["x-ms-retry-after-ms", { "x-ms-retry-after-ms": "40" }, 40],
    ["an HTTP date", { "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }, 5000],
    ["a date in the past", { "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }, 0],
    ["garbage", { "retry-after": "soon" }, undefined],
  ])("%s", (_what, headers, expected) => {
    expect(retryAfterMs((n) => headers[n], now)).toBe(expected);
  });
});
