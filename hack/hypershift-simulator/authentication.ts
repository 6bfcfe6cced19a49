/**
 * What HyperShift checks of `spec.configuration.authentication` before it reports
 * ValidConfiguration (its CRD's CEL rules on oidcProviders and the operator's
 * ValidateAuthenticationSpec): OIDC needs a provider and takes at most one, each issuer an https
 * URL without query, fragment or user info and not the cluster's own service-account issuer, with
 * 1..10 audiences, a username claim, and unique client components.
 */
import type { HostedCluster, OIDCProvider } from "../../operators/api/hypershift/v1beta1/index.ts";

function issuerProblem(p: OIDCProvider, ownIssuer: string | undefined): string | undefined {
  const raw = p.issuer.issuerURL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `issuerURL ${JSON.stringify(raw)}: must be a valid URL`;
  }
  if (url.protocol !== "https:") return `issuerURL ${raw}: must use the 'https' scheme`;
  if (url.search || url.hash || url.username || url.password)
    return `issuerURL ${raw}: must not have a query, fragment or user info`;
  if (ownIssuer && raw === ownIssuer) return `issuerURL ${raw}: must not be the cluster's own issuer`;
  const audiences = p.issuer.audiences;
  if (audiences.length < 1 || audiences.length > 10) return "issuer.audiences: must have 1 to 10 entries";
  return undefined;
}

function providerProblem(p: OIDCProvider, ownIssuer: string | undefined): string | undefined {
  const issuer = issuerProblem(p, ownIssuer);
  if (issuer) return issuer;
  if (!p.claimMappings.username.claim) return "claimMappings.username.claim: claim is required";
  const components = (p.oidcClients ?? []).map((c) => `${c.componentNamespace}/${c.componentName}`);
  const duplicate = components.find((c, i) => components.indexOf(c) !== i);
  if (duplicate) return `oidcClients: component ${duplicate} is listed twice`;
  return undefined;
}

/** Why HyperShift would refuse the HostedCluster's authentication configuration, if it would. */
export function authenticationProblem(hc: HostedCluster): string | undefined {
  const authn = hc.spec.configuration?.authentication;
  if (!authn || authn.type !== "OIDC") return undefined;
  const providers = authn.oidcProviders ?? [];
  if (providers.length === 0) return "spec.configuration.authentication: type OIDC needs an OIDC provider";
  if (providers.length > 1)
    return `spec.configuration.authentication.oidcProviders: at most one provider can be configured, found ${providers.length}`;
  for (const [i, p] of providers.entries()) {
    const problem = providerProblem(p, hc.spec.issuerURL);
    if (problem) return `spec.configuration.authentication.oidcProviders[${i}].${problem}`;
  }
  return undefined;
}
