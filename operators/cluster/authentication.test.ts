/**
 * An ExternalAuth's clients as HyperShift takes them: a Confidential client (the console) names a
 * Secret that is handed over empty and marked for the customer to fill in on the hosted cluster;
 * a Public one names none.
 */
import { describe, expect, it } from "vitest";
import { HOSTED_CLUSTER_SOURCED_ANNOTATION } from "../api/hypershift/v1beta1/index.ts";
import type { ExternalAuth } from "../api/v1alpha1/index.ts";
import { clientSecrets, oidcProvider } from "./authentication.ts";

const auth = (types: {
  console: "Confidential" | "Public";
  cli: "Confidential" | "Public";
}): ExternalAuth => ({
  apiVersion: "hcp.aro.dev/v1alpha1",
  kind: "ExternalAuth",
  metadata: { name: "entra", namespace: "customer" },
  spec: {
    clusterRef: { name: "c" },
    issuer: { url: "https://login.example.com/v2.0", audiences: ["app"] },
    clients: [
      {
        componentName: "console",
        componentNamespace: "openshift-console",
        clientId: "app",
        type: types.console,
      },
      { componentName: "cli", componentNamespace: "openshift-console", clientId: "app", type: types.cli },
    ],
    claim: { mappings: { username: { claim: "email" } } },
  },
});

describe("OIDC clients", () => {
  it("a Confidential client names its Secret; a Public one names none", () => {
    const clients = oidcProvider(auth({ console: "Confidential", cli: "Public" })).oidcClients ?? [];
    expect(clients[0]?.clientSecret).toEqual({ name: "entra-console-client-secret" });
    expect(clients[1]).not.toHaveProperty("clientSecret");
  });

  it("each Secret named is handed over empty and hosted-cluster-sourced, in the HostedCluster's namespace", () => {
    const secrets = clientSecrets([auth({ console: "Confidential", cli: "Public" })], "ocm-c");
    expect(secrets).toEqual([
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: "entra-console-client-secret",
          namespace: "ocm-c",
          annotations: { [HOSTED_CLUSTER_SOURCED_ANNOTATION]: "true" },
        },
        type: "Opaque",
      },
    ]);
    expect(clientSecrets([auth({ console: "Public", cli: "Public" })], "ocm-c")).toEqual([]);
  });
});
