import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { specialPath } from "./special-paths.ts";

describe("special paths", () => {
  const registry = new Registry();

  it("answers /healthz and /metrics to GET", async () => {
    expect(await specialPath(registry, "GET", "/healthz")).toEqual({ status: 200, body: "ok" });
    const metrics = await specialPath(registry, "GET", "/metrics");
    expect(metrics?.status).toBe(200);
    expect(metrics?.headers?.["content-type"]).toBe(registry.contentType);
  });

  it("leaves other methods and paths to the router", async () => {
    expect(await specialPath(registry, "POST", "/healthz")).toBeUndefined();
    expect(await specialPath(registry, "GET", "/subscriptions")).toBeUndefined();
  });
});
