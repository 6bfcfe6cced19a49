import { describe, expect, it } from "vitest";
import { armOperation, retryDelay, type RetryInput } from "./pipeline.ts";

const retry = { maxRetries: 3, retryDelayMs: 100, maxRetryDelayMs: 400, maxRetryAfterMs: 5_000 };
const input = (
  attempt: number,
  status?: number,
  headers: Record<string, string> = {},
  errorCode?: string,
): RetryInput => ({
  attempt,
  status,
  header: (n) => headers[n],
  errorCode,
});
// random() = 1 makes the backoff its upper bound: base × (0.5 + 0.5).
const top = (): number => 1;

describe("retryDelay", () => {
  it.each<[string, RetryInput, number | undefined]>([
    ["success", input(0, 200), undefined],
    ["user error", input(0, 400), undefined],
    ["conflict", input(0, 409), undefined],
    ["500, first retry", input(0, 500), 100],
    ["502, third retry", input(2, 502), 400],
    ["501 is not transient", input(0, 501), undefined],
    ["408", input(1, 408), 200],
    ["429 with Retry-After", input(0, 429, { "retry-after": "2" }), 2_000],
    ["429 with retry-after-ms", input(0, 429, { "retry-after-ms": "30" }), 30],
    ["429 without Retry-After backs off", input(1, 429), 200],
    [
      "429 asking for more than the cap goes back to the caller",
      input(0, 429, { "retry-after": "60" }),
      undefined,
    ],
    ["503 with Retry-After", input(0, 503, { "retry-after": "1" }), 1_000],
    ["network error", input(0, undefined, {}, "ECONNRESET"), 100],
    ["other thrown error", input(0, undefined, {}, "ERR_SOMETHING"), undefined],
    ["retries exhausted", input(3, 500), undefined],
  ])("%s", (_what, i, expected) => {
    expect(retryDelay(retry, i, top)).toBe(expected);
  });

  it("jitters the backoff between half and all of it", () => {
    expect(retryDelay(retry, input(1, 500), () => 0)).toBe(100);
    expect(retryDelay(retry, input(1, 500), () => 1)).toBe(200);
  });
});

describe("armOperation", () => {
  const base = "https://management.azure.com/subscriptions/s";
  it.each([
    ["PUT", `${base}/resourcegroups/rg?api-version=1`, "Microsoft.Resources/resourceGroups/write"],
    ["DELETE", `${base}/resourceGroups/rg`, "Microsoft.Resources/resourceGroups/delete"],
    [
      "GET",
      `${base}/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/pip`,
      "Microsoft.Network/publicIPAddresses/read",
    ],
    [
      "PUT",
      `${base}/resourceGroups/rg/providers/microsoft.network/loadbalancers/lb`,
      "Microsoft.Network/loadBalancers/write",
    ],
    [
      "PUT",
      `${base}/resourceGroups/rg/providers/Microsoft.Network/dnsZones/z.com`,
      "Microsoft.Network/dnszones/write",
    ],
    [
      "DELETE",
      `${base}/resourceGroups/rg/providers/Microsoft.Network/dnsZones/z.com/A/*.apps`,
      "Microsoft.Network/dnszones/A/delete",
    ],
    ["GET", `${base}/providers/Microsoft.Network/locations/eastus/operations/abc`, "operations/read"],
    ["GET", `${base}/operationresults/abc`, "operations/read"],
    ["GET", `${base}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm`, "other/read"],
    ["POST", "https://login.example/tenant/oauth2/v2.0/token", "other/action"],
  ])("%s %s", (method, url, expected) => {
    expect(armOperation(method, url)).toBe(expected);
  });
});
