/**
 * ExternalAuth (hcp.aro.dev/v1alpha1): an external OIDC identity provider of one HcpCluster.
 * Mirrors crds/hcp.aro.dev_externalauths.yaml.
 */
import type { KubeObject, ResourceType } from "../meta/v1.ts";
import type { API_VERSION, Condition, Phase } from "./meta.ts";
import { GROUP, VERSION } from "./meta.ts";

export const EXTERNAL_AUTH_KIND = "ExternalAuth";

/** Held by the external auth controller until the HostedCluster no longer carries the provider. */
export const EXTERNAL_AUTH_FINALIZER = "hcp.aro.dev/externalauth";

export const ExternalAuthResource = {
  group: GROUP,
  version: VERSION,
  kind: EXTERNAL_AUTH_KIND,
  plural: "externalauths",
  namespaced: true,
} as const satisfies ResourceType;

export interface ExternalAuth extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: typeof EXTERNAL_AUTH_KIND;
  spec: ExternalAuthSpec;
  status?: ExternalAuthStatus;
}

export interface ExternalAuthSpec {
  /** Immutable. An HcpCluster in the same namespace. */
  clusterRef: { name: string };
  issuer: TokenIssuer;
  /** At most 20, unique by component. */
  clients?: ExternalAuthClient[];
  claim: ExternalAuthClaim;
}

export interface TokenIssuer {
  /** https, no query, fragment or user info. */
  url: string;
  /** 1..10. */
  audiences: string[];
  /** PEM bundle of the CA that signs the issuer's serving certificate. */
  ca?: string;
}

export type ExternalAuthClientType = "Confidential" | "Public";

/**
 * The OpenShift console's OIDC client: the one Confidential client ARO HCP allows (it signs users
 * in with a client secret), and it must be Confidential.
 */
export const CONSOLE_CLIENT = { name: "console", namespace: "openshift-console" } as const;

export interface ExternalAuthClient {
  componentName: string;
  componentNamespace: string;
  clientId: string;
  extraScopes?: string[];
  type: ExternalAuthClientType;
}

export type UsernamePrefixPolicy = "None" | "Prefix" | "NoPrefix";

export interface ExternalAuthClaim {
  mappings: {
    username: { claim: string; prefix?: string; prefixPolicy?: UsernamePrefixPolicy };
    groups?: { claim: string; prefix?: string };
  };
  validationRules?: Array<{ type: "RequiredClaim"; requiredClaim: { claim: string; requiredValue: string } }>;
}

export interface ExternalAuthStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  phase?: Phase;
}
