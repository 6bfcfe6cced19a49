import { describe, expect, it } from "vitest";
import type { HostedCluster, OIDCProvider } from "../../operators/api/hypershift/v1beta1/index.ts";
import { getCondition } from "../../operators/runtime/conditions.ts";
import { hostedClusterFixture } from "../../test/support/hypershift.ts";
import { computeHostedClusterStatus } from "./status.ts";

const provider = (over: Partial<OIDCProvider["issuer"]> = {}, name = "entra"): OIDCProvider => ({
  name,
  issuer: { issuerURL: "https://login.example.com/tenant/v2.0", audiences: ["app-1"], ...over },
  oidcClients: [{ componentName: "console", componentNamespace: "openshift-console", clientID: "app-1" }],
  claimMappings: { username: { claim: "email" } },
});

function withProviders(...providers: OIDCProvider[]): HostedCluster {
  const hc = hostedClusterFixture("ns", "demo");
  hc.metadata.generation = 3;
  hc.spec.issuerURL = "https://oidc.example.com/demo";
  hc.spec.configuration = { authentication: { type: "OIDC", oidcProviders: providers } };
  return hc;
}

const validConfiguration = (hc: HostedCluster) =>
  getCondition(
    computeHostedClusterStatus(hc, { now: new Date(0), provisionDelayMs: 1, failure: undefined }).status
      .conditions,
    "ValidConfiguration",
  );

describe("the simulator's ValidConfiguration", () => {
  it("accepts one https provider, at the HostedCluster's generation", () => {
    const c = validConfiguration(withProviders(provider()));
    expect(c).toMatchObject({ status: "True", reason: "AsExpected", observedGeneration: 3 });
  });

  it("accepts a HostedCluster without authentication (OpenShift's OAuth)", () => {
    expect(validConfiguration(hostedClusterFixture("ns", "demo"))?.status).toBe("True");
  });

  it.each([
    [
      "two providers",
      withProviders(provider(), provider({}, "second")),
      "at most one provider can be configured, found 2",
    ],
    [
      "an http issuer",
      withProviders(provider({ issuerURL: "http://login.example.com" })),
      "must use the 'https' scheme",
    ],
    [
      "a query",
      withProviders(provider({ issuerURL: "https://login.example.com/?a=b" })),
      "must not have a query",
    ],
    [
      "the cluster's own issuer",
      withProviders(provider({ issuerURL: "https://oidc.example.com/demo" })),
      "must not be the cluster's own issuer",
    ],
    ["no audience", withProviders(provider({ audiences: [] })), "must have 1 to 10 entries"],
    ["OIDC without a provider", withProviders(), "type OIDC needs an OIDC provider"],
  ])("refuses %s with HyperShift's InvalidConfiguration", (_what, hc, message) => {
    const c = validConfiguration(hc);
    expect(c).toMatchObject({ status: "False", reason: "InvalidConfiguration" });
    expect(c?.message).toContain(message);
    expect(c?.message).toMatch(/^spec\.configuration\.authentication/);
  });
});
