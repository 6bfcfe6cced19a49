import { describe, expect, it } from "vitest";
import type { Reply } from "../arm-request.ts";
import { CloudError } from "../errors.ts";
import { routeRequest } from "./router.ts";
import { PATTERNS, route } from "./routes.ts";

const get = (): Promise<Reply> => Promise.resolve({ status: 200 });
const routes = [route({ pattern: PATTERNS.cluster, methods: { GET: get } })];
const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
const path = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1`;

function refusal(fn: () => unknown): CloudError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CloudError) return err;
  }
  throw new Error("expected a CloudError");
}

describe("router", () => {
  it("finds the route, its parameters and the method's handler, ignoring the path's casing", () => {
    const routed = routeRequest(routes, "GET", path.toLowerCase().replace("c1", "C1"));
    expect(routed.route.resourceType).toBe("Microsoft.RedHatOpenShift/hcpOpenShiftClusters");
    expect(routed.params["cluster"]).toBe("C1");
    expect(routed.handler).toBe(get);
  });

  it("answers 404 for no route, 405 for a method not served, 400 for malformed percent-encoding", () => {
    expect(refusal(() => routeRequest(routes, "GET", "/nowhere")).status).toBe(404);
    expect(refusal(() => routeRequest(routes, "PUT", path)).status).toBe(405);
    const bad = refusal(() => routeRequest(routes, "GET", path.replace("c1", "c%ZZ")));
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("'c%ZZ'");
  });
});
