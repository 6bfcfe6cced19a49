/**
 * How the operators reach Azure: which ARM endpoint and Entra ID authority, which identity, which
 * extra CA to trust (the ARM emulator's), and the bounds that keep one reconcile from blocking on
 * Azure (SDK retries, request timeout, how long a long-running operation is awaited in line).
 * `AzureConfig` is what callers write; `resolveAzureConfig` fills the defaults once.
 */
import type { TokenCredential } from "@azure/identity";
import { readFile } from "node:fs/promises";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import type { Registry } from "prom-client";
import { metricsRegistry } from "../runtime/metrics.ts";

export const DEFAULT_ARM_ENDPOINT = "https://management.azure.com";

/** Which identity signs ARM requests. */
export type AzureCredentialConfig =
  /** The usual chain: environment, workload identity, managed identity (DefaultAzureCredential). */
  | "default"
  | { tenantId: string; clientId: string; clientSecret: string }
  | { tenantId: string; clientId: string; certificatePath: string }
  /** A managed identity; clientId selects a user-assigned one. */
  | { managedIdentityClientId?: string }
  /** A credential built elsewhere (tests, other hosts). */
  | { tokenCredential: TokenCredential };

export interface AzureRetryConfig {
  /** Retries inside the SDK of one HTTP request (429, 5xx, network errors). Default 3. */
  maxRetries?: number;
  /** First backoff for 5xx and network errors, doubled each retry, with jitter. Default 800 ms. */
  retryDelayMs?: number;
  /** Cap of that backoff. Default 8 s. */
  maxRetryDelayMs?: number;
  /**
   * The longest Retry-After the SDK waits out inline. A longer one is not retried here: the call
   * fails with an AzureRetryableError carrying retryAfterMs, and the controller requeues. Default 10 s.
   */
  maxRetryAfterMs?: number;
}

export interface AzureConfig {
  /** ARM endpoint (the `endpoint` of the SDK clients). Default https://management.azure.com. */
  armEndpoint?: string;
  /** Entra ID authority host. Default: AZURE_AUTHORITY_HOST or https://login.microsoftonline.com. */
  authorityHost?: string;
  /**
   * A PEM file of extra CAs to trust for token and ARM requests, on top of Node's bundled roots
   * (for the ARM emulator). Applied to these clients only, never process-wide.
   */
  caFile?: string;
  /** Default "default". */
  credential?: AzureCredentialConfig;
  retry?: AzureRetryConfig;
  /** Abort one HTTP request (not retried inline) after this long. Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * How long one call waits in line for a long-running operation before it returns "in progress"
   * (the operation goes on; the next call polls it once and resumes). Default 0: a controller's
   * worker never sleeps on Azure. ARM asks for polls 10 s to 10 min apart, and a worker held that
   * long per operation caps a region's throughput at workers / (operations × wait).
   */
  operationWaitMs?: number;
  /** How soon to poll a long-running operation again (the retryAfterMs of "in progress"). Default 2 s. */
  pollIntervalMs?: number;
  /** The retryAfterMs when a resource is changing through an operation that is not ours. Default 10 s. */
  inProgressRequeueMs?: number;
  /** Where ARM request metrics go. Default: the operators' /metrics registry. */
  registry?: Registry;
}

/**
 * TLS trust as the SDK's `tlsOptions`, which it spreads into one https.Agent per client. A CA list
 * there costs on every call: the agent names its connection pool by the whole list (about 200 KB
 * of PEM joined per request) and each new connection parses every root again; that was four
 * fifths of the operators' CPU in the lifecycle bench. One secure context, built once, serves
 * every connection (`ca` stays unset so the pool's name stays short).
 */
export interface SdkTlsSettings {
  secureContext: SecureContext;
  ca?: undefined;
}

export function sdkTlsSettings(ca: string[]): SdkTlsSettings {
  return { secureContext: createSecureContext({ ca }) };
}

export interface ResolvedAzureConfig {
  armEndpoint: string;
  /** undefined: the SDK's default (AZURE_AUTHORITY_HOST or the public cloud). */
  authorityHost: string | undefined;
  /** Node's bundled roots plus caFile, or undefined to keep the defaults untouched. */
  tls: SdkTlsSettings | undefined;
  credential: AzureCredentialConfig;
  retry: Required<AzureRetryConfig>;
  requestTimeoutMs: number;
  operationWaitMs: number;
  pollIntervalMs: number;
  inProgressRequeueMs: number;
  registry: Registry;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`azure config: ${name} must be a number ≥ 0`);
  return value;
}

export async function resolveAzureConfig(config: AzureConfig = {}): Promise<ResolvedAzureConfig> {
  const armEndpoint = trimSlash(config.armEndpoint ?? DEFAULT_ARM_ENDPOINT);
  if (!armEndpoint.startsWith("https://")) {
    throw new TypeError(
      `azure config: armEndpoint ${armEndpoint} must be https (bearer tokens are never sent in clear)`,
    );
  }
  const tls = config.caFile
    ? sdkTlsSettings([...rootCertificates, await readFile(config.caFile, "utf8")])
    : undefined;
  const retry = config.retry ?? {};
  return {
    armEndpoint,
    authorityHost: config.authorityHost ? trimSlash(config.authorityHost) : undefined,
    tls,
    credential: config.credential ?? "default",
    retry: {
      maxRetries: positive("retry.maxRetries", retry.maxRetries, 3),
      retryDelayMs: positive("retry.retryDelayMs", retry.retryDelayMs, 800),
      maxRetryDelayMs: positive("retry.maxRetryDelayMs", retry.maxRetryDelayMs, 8_000),
      maxRetryAfterMs: positive("retry.maxRetryAfterMs", retry.maxRetryAfterMs, 10_000),
    },
    requestTimeoutMs: positive("requestTimeoutMs", config.requestTimeoutMs, 30_000),
    operationWaitMs: positive("operationWaitMs", config.operationWaitMs, 0),
    pollIntervalMs: positive("pollIntervalMs", config.pollIntervalMs, 2_000),
    inProgressRequeueMs: positive("inProgressRequeueMs", config.inProgressRequeueMs, 10_000),
    registry: config.registry ?? metricsRegistry,
  };
}
