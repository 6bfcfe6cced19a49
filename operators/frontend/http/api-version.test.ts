import { describe, expect, it } from "vitest";
import { API_VERSIONS, SUBSCRIPTION_API_VERSION } from "../api/registry.ts";
import { CloudError } from "../errors.ts";
import { checkApiVersion } from "./api-version.ts";
import { PATTERNS, route } from "./routes.ts";

const resource = route({ pattern: PATTERNS.cluster, methods: {} });
const subscription = route({ pattern: PATTERNS.subscription, apiVersion: "subscription", methods: {} });
const unversioned = route({ pattern: PATTERNS.providerOperations, apiVersion: "none", methods: {} });

function refusal(fn: () => unknown): CloudError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CloudError) return err;
  }
  throw new Error("expected a CloudError");
}

describe("api-version", () => {
  it("takes every served version on a resource route", () => {
    for (const v of API_VERSIONS) expect(checkApiVersion(resource, v)).toBe(v);
  });

  it("refuses a missing version and one not served, naming the route's resource type", () => {
    expect(refusal(() => checkApiVersion(resource, null)).body).toMatchObject({
      code: "InvalidParameter",
      target: "api-version",
    });
    expect(refusal(() => checkApiVersion(resource, "2099-01-01")).body).toEqual({
      code: "InvalidResourceType",
      message:
        "The resource type 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters' could not be found API version '2099-01-01'.",
    });
  });

  it("takes only ARM's lifecycle version on the subscription route, and nothing is checked where none is served", () => {
    expect(checkApiVersion(subscription, SUBSCRIPTION_API_VERSION)).toBeUndefined();
    expect(refusal(() => checkApiVersion(subscription, API_VERSIONS[0] ?? "")).status).toBe(400);
    expect(checkApiVersion(unversioned, null)).toBeUndefined();
    expect(checkApiVersion(unversioned, "anything")).toBeUndefined();
    expect(checkApiVersion(unversioned, API_VERSIONS[0] ?? "")).toBe(API_VERSIONS[0]);
  });
});
