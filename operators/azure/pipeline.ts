/**
 * HTTP pipeline policies for the ARM clients:
 * - a bounded retry policy in place of the SDK's default (which waits out any Retry-After however
 *   long, and retries 5xx with up to 64 s between tries): a few retries with capped backoff, and a
 *   Retry-After longer than the cap is handed to the controller instead of slept on;
 * - a per-request timeout, so a request that never answers fails instead of blocking a worker;
 * - ARM request metrics by operation (ARM's action names) and status code.
 * Types come from the clients themselves, so no SDK-internal package is imported.
 */
import type { NetworkManagementClient } from "@azure/arm-network";
import type { Counter, Histogram, Registry } from "prom-client";
import { sleep } from "../runtime/backoff.ts";
import { counter, histogram } from "../runtime/metrics.ts";
import type { ResolvedAzureConfig } from "./config.ts";
import { NETWORK_ERROR_CODES, retryAfterMs } from "./errors.ts";

type Pipeline = NetworkManagementClient["pipeline"];
export type PipelinePolicy = Parameters<Pipeline["addPolicy"]>[0];
type PipelineRequest = Parameters<PipelinePolicy["sendRequest"]>[0];
type PipelineResponse = Awaited<ReturnType<PipelinePolicy["sendRequest"]>>;

/** The policy name of the SDK's default retry policy, which ours replaces. */
const SDK_RETRY_POLICY = "defaultRetryPolicy";

export interface RetryInput {
  attempt: number;
  status: number | undefined;
  header: (name: string) => string | undefined;
  errorCode: string | undefined;
}

/** Milliseconds to wait before retrying, or undefined to give the response (or error) back now. */
export function retryDelay(
  retry: ResolvedAzureConfig["retry"],
  input: RetryInput,
  random: () => number = Math.random,
): number | undefined {
  if (input.attempt >= retry.maxRetries) return undefined;
  const base = Math.min(retry.maxRetryDelayMs, retry.retryDelayMs * 2 ** input.attempt);
  const backoff = Math.round(base * (0.5 + random() / 2));
  const status = input.status;
  if (status === undefined) {
    return input.errorCode !== undefined && NETWORK_ERROR_CODES.has(input.errorCode) ? backoff : undefined;
  }
  if (status === 429 || status === 503) {
    const after = retryAfterMs(input.header);
    if (after === undefined) return backoff;
    return after <= retry.maxRetryAfterMs ? after : undefined;
  }
  return isTransientStatus(status) ? backoff : undefined;
}

/** 408 and 5xx, except 501 Not Implemented and 505 HTTP Version Not Supported. */
function isTransientStatus(status: number): boolean {
  return status === 408 || (status >= 500 && status !== 501 && status !== 505);
}

export function boundedRetryPolicy(retry: ResolvedAzureConfig["retry"]): PipelinePolicy {
  return {
    name: "hcpBoundedRetryPolicy",
    async sendRequest(request, next) {
      for (let attempt = 0; ; attempt++) {
        let response: PipelineResponse | undefined;
        let error: unknown;
        try {
          response = await next(request);
        } catch (err) {
          error = err;
        }
        const delay = retryDelay(retry, {
          attempt,
          status: response?.status,
          header: (name) => response?.headers.get(name),
          errorCode: errorCode(error),
        });
        if (delay === undefined || request.abortSignal?.aborted) {
          if (response) return response;
          throw error;
        }
        const signal = request.abortSignal;
        await sleep(delay, signal instanceof AbortSignal ? signal : undefined);
      }
    },
  };
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  return typeof err.code === "string" ? err.code : undefined;
}

export function requestTimeoutPolicy(timeoutMs: number): PipelinePolicy {
  return {
    name: "hcpRequestTimeoutPolicy",
    sendRequest(request: PipelineRequest, next) {
      if (timeoutMs > 0 && !(request.timeout > 0)) request.timeout = timeoutMs;
      return next(request);
    },
  };
}

export interface ArmMetrics {
  requests: Counter<"operation" | "code">;
  duration: Histogram<"operation">;
}

export function armMetrics(registry: Registry): ArmMetrics {
  return {
    requests: counter(registry, {
      name: "hcp_azure_arm_requests_total",
      help: "HTTP requests to ARM (each retry counted), by operation and status code ('error' when no response)",
      labelNames: ["operation", "code"],
    }),
    duration: histogram(registry, {
      name: "hcp_azure_arm_request_duration_seconds",
      help: "Seconds per HTTP request to ARM, by operation",
      labelNames: ["operation"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    }),
  };
}

export function metricsPolicy(metrics: ArmMetrics): PipelinePolicy {
  return {
    name: "hcpArmMetricsPolicy",
    async sendRequest(request, next) {
      const operation = armOperation(request.method, request.url);
      const end = metrics.duration.startTimer({ operation });
      try {
        const response = await next(request);
        metrics.requests.inc({ operation, code: String(response.status) });
        return response;
      } catch (err) {
        metrics.requests.inc({ operation, code: "error" });
        throw err;
      } finally {
        end();
      }
    },
  };
}

/** ARM's canonical resource type names, keyed lowercased, for the metric label. */
const KNOWN_TYPES = new Map(
  [
    "Microsoft.Network/dnszones",
    "Microsoft.Network/publicIPAddresses",
    "Microsoft.Network/loadBalancers",
    "Microsoft.Resources/resourceGroups",
    "Microsoft.ManagedIdentity/userAssignedIdentities",
    "Microsoft.Authorization/roleAssignments",
    "Microsoft.KeyVault/vaults",
    "Microsoft.Compute/skus",
    "Microsoft.Compute/locations",
  ].map((t) => [t.toLowerCase(), t]),
);
const RECORD_TYPES = new Set(["A", "AAAA", "CAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"]);
const OPERATION_URL = /^(operations|operationresults|dnsoperationstatuses|dnsoperationresults)$/;
const ACTIONS: Record<string, string> = {
  GET: "read",
  HEAD: "read",
  PUT: "write",
  PATCH: "write",
  DELETE: "delete",
};

/** ARM's name for what a request does, e.g. Microsoft.Network/publicIPAddresses/write. */
export function armOperation(method: string, url: string): string {
  const action = ACTIONS[method.toUpperCase()] ?? "action";
  const segs = new URL(url).pathname.split("/").filter(Boolean);
  const lower = segs.map((s) => s.toLowerCase());
  if (OPERATION_URL.test(lower.at(-2) ?? "")) return "operations/read";
  const p = lower.lastIndexOf("providers");
  if (p >= 0) return `${providerType(segs, p)}/${action}`;
  return lower[2] === "resourcegroups" ? `Microsoft.Resources/resourceGroups/${action}` : `other/${action}`;
}

/** The canonical type after `providers` at index p; record sets as dnszones/<record type>. */
function providerType(segs: string[], p: number): string {
  const type =
    KNOWN_TYPES.get(
      segs
        .slice(p + 1, p + 3)
        .join("/")
        .toLowerCase(),
    ) ?? "other";
  const recordType = segs[p + 4]?.toUpperCase();
  if (type !== "Microsoft.Network/dnszones" || recordType === undefined) return type;
  return `${type}/${RECORD_TYPES.has(recordType) ? recordType : "recordsets"}`;
}

/** Replaces the SDK's retry policy with ours and adds the timeout and metrics policies. */
export function installPolicies(pipeline: Pipeline, config: ResolvedAzureConfig, metrics: ArmMetrics): void {
  pipeline.removePolicy({ name: SDK_RETRY_POLICY });
  pipeline.addPolicy(boundedRetryPolicy(config.retry), { phase: "Retry" });
  pipeline.addPolicy(requestTimeoutPolicy(config.requestTimeoutMs), { afterPhase: "Sign" });
  pipeline.addPolicy(metricsPolicy(metrics), { afterPhase: "Sign" });
}
