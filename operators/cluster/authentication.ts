/**
 * A cluster's ExternalAuths as HyperShift takes them: `spec.configuration.authentication` with
 * `type: OIDC` and one oidcProviders entry per ExternalAuth, each issuer CA in a ConfigMap of the
 * HostedCluster's namespace (HyperShift reads key `ca-bundle.crt`). ARO HCP allows one external
 * auth per cluster and HyperShift's CRD at most one provider; the frontend refuses a second, and
 * the controller carries only the oldest (externalAuthsCarried), so a second made with kubectl
 * waits instead of breaking the HostedCluster.
 */
import {
  HOSTED_CLUSTER_SOURCED_ANNOTATION,
  type AuthenticationSpec,
  type OIDCProvider,
} from "../api/hypershift/v1beta1/index.ts";
import type { ExternalAuth, ExternalAuthClient } from "../api/v1alpha1/index.ts";
import type { Manifest } from "../api/work/v1.ts";

/** HyperShift's key for an issuer CA in its ConfigMap. */
export const CA_BUNDLE_KEY = "ca-bundle.crt";

/** The ConfigMap holding an ExternalAuth's issuer CA. */
export function caConfigMapName(ea: ExternalAuth): string {
  return `${ea.metadata.name ?? ""}-issuer-ca`;
}

/**
 * The Secret a Confidential client's secret lives in: created empty beside the HostedCluster and
 * marked hosted-cluster-sourced, so HyperShift makes it in the hosted cluster's openshift-config and
 * leaves it to the customer there (the secret never passes through the service).
 */
export function clientSecretName(ea: ExternalAuth, client: ExternalAuthClient): string {
  return `${ea.metadata.name ?? ""}-${client.componentName}-client-secret`;
}

export function oidcProvider(ea: ExternalAuth): OIDCProvider {
  const { issuer, clients, claim } = ea.spec;
  const { username, groups } = claim.mappings;
  // ARM's "None" is HyperShift's "" (no opinion).
  const prefixPolicy = username.prefixPolicy === "None" ? "" : username.prefixPolicy;
  return {
    name: ea.metadata.name ?? "",
    issuer: {
      issuerURL: issuer.url,
      audiences: [...issuer.audiences],
      ...(issuer.ca ? { issuerCertificateAuthority: { name: caConfigMapName(ea) } } : {}),
    },
    ...(clients?.length
      ? {
          oidcClients: clients.map((c) => ({
            componentName: c.componentName,
            componentNamespace: c.componentNamespace,
            clientID: c.clientId,
            ...(c.type === "Confidential" ? { clientSecret: { name: clientSecretName(ea, c) } } : {}),
            ...(c.extraScopes?.length ? { extraScopes: [...c.extraScopes] } : {}),
          })),
        }
      : {}),
    claimMappings: {
      username: {
        claim: username.claim,
        ...(prefixPolicy !== undefined ? { prefixPolicy } : {}),
        ...(username.prefix ? { prefix: { prefixString: username.prefix } } : {}),
      },
      ...(groups
        ? { groups: { claim: groups.claim, ...(groups.prefix ? { prefix: groups.prefix } : {}) } }
        : {}),
    },
    ...(claim.validationRules?.length
      ? {
          claimValidationRules: claim.validationRules.map((r) => ({
            ...r,
            requiredClaim: { ...r.requiredClaim },
          })),
        }
      : {}),
  };
}

/** The authentication block, or undefined when the cluster has no ExternalAuth (OpenShift's own OAuth). */
export function authenticationOf(carried: readonly ExternalAuth[]): AuthenticationSpec | undefined {
  if (carried.length === 0) return undefined;
  return { type: "OIDC", oidcProviders: carried.map(oidcProvider) };
}

/** The issuer CA ConfigMaps of the carried ExternalAuths that name a CA. */
export function caConfigMaps(carried: readonly ExternalAuth[], namespace: string): Manifest[] {
  return carried
    .filter((ea) => ea.spec.issuer.ca)
    .map((ea) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: caConfigMapName(ea), namespace },
      data: { [CA_BUNDLE_KEY]: ea.spec.issuer.ca ?? "" },
    }));
}

/** The empty Secrets the carried ExternalAuths' Confidential clients name (clientSecretName). */
export function clientSecrets(carried: readonly ExternalAuth[], namespace: string): Manifest[] {
  return carried.flatMap((ea) =>
    (ea.spec.clients ?? [])
      .filter((c) => c.type === "Confidential")
      .map((c) => ({
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: clientSecretName(ea, c),
          namespace,
          annotations: { [HOSTED_CLUSTER_SOURCED_ANNOTATION]: "true" },
        },
        type: "Opaque",
      })),
  );
}
