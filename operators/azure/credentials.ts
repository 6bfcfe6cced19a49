/**
 * The TokenCredential for ARM. Token requests go through @azure/identity's own HTTP pipeline, so
 * the extra CA is handed to it as `tlsOptions` (the same hook the ARM clients use) and the
 * authority host is set per credential; nothing is set process-wide. With a custom authority host
 * MSAL's instance discovery is turned off: it would ask login.microsoftonline.com about a host it
 * does not know instead of reading the host's own OpenID configuration.
 */
import {
  ClientCertificateCredential,
  ClientSecretCredential,
  DefaultAzureCredential,
  ManagedIdentityCredential,
  type ClientSecretCredentialOptions,
  type TokenCredential,
} from "@azure/identity";
import type { ResolvedAzureConfig } from "./config.ts";

/** Options every credential gets: authority, TLS trust, bounded retries of token requests. */
export function tokenCredentialOptions(config: ResolvedAzureConfig): ClientSecretCredentialOptions {
  return {
    ...(config.authorityHost ? { authorityHost: config.authorityHost, disableInstanceDiscovery: true } : {}),
    ...(config.tls ? { tlsOptions: config.tls } : {}),
    retryOptions: {
      maxRetries: config.retry.maxRetries,
      retryDelayInMs: config.retry.retryDelayMs,
      maxRetryDelayInMs: config.retry.maxRetryDelayMs,
    },
  };
}

export function createCredential(config: ResolvedAzureConfig): TokenCredential {
  const options = tokenCredentialOptions(config);
  const c = config.credential;
  if (c === "default") return new DefaultAzureCredential(options);
  if ("tokenCredential" in c) return c.tokenCredential;
  if ("clientSecret" in c) return new ClientSecretCredential(c.tenantId, c.clientId, c.clientSecret, options);
  if ("certificatePath" in c) {
    return new ClientCertificateCredential(
      c.tenantId,
      c.clientId,
      { certificatePath: c.certificatePath },
      options,
    );
  }
  return new ManagedIdentityCredential({
    ...options,
    ...(c.managedIdentityClientId ? { clientId: c.managedIdentityClientId } : {}),
  });
}
