/**
 * One factory for the ARM SDK clients, cached per subscription, all sharing one credential (one
 * token cache), the configured endpoint, TLS trust and pipeline policies. It also remembers the
 * long-running operations a call stopped waiting for, so the next call resumes polling them
 * instead of starting another.
 */
import { AuthorizationManagementClient } from "@azure/arm-authorization";
import { ComputeManagementClient } from "@azure/arm-compute";
import { DnsManagementClient } from "@azure/arm-dns";
import { KeyVaultManagementClient } from "@azure/arm-keyvault";
import { ManagedServiceIdentityClient } from "@azure/arm-msi";
import { NetworkManagementClient } from "@azure/arm-network";
import { ResourceManagementClient } from "@azure/arm-resources";
import type { TokenCredential } from "@azure/identity";
import {
  resolveAzureConfig,
  type AzureConfig,
  type ResolvedAzureConfig,
  type SdkTlsSettings,
} from "./config.ts";
import { createCredential } from "./credentials.ts";
import { armMetrics, installPolicies, type ArmMetrics } from "./pipeline.ts";

interface ClientOptions {
  endpoint: string;
  $host: string;
  credentialScopes: string[];
  tlsOptions?: SdkTlsSettings;
}

export class AzureClients {
  readonly config: ResolvedAzureConfig;
  readonly credential: TokenCredential;
  /** Serialized pollers of operations still running, by operation key (see lro.ts). */
  readonly pendingOperations = new Map<string, string>();
  readonly #metrics: ArmMetrics;
  readonly #dns = new Map<string, DnsManagementClient>();
  readonly #network = new Map<string, NetworkManagementClient>();
  readonly #resources = new Map<string, ResourceManagementClient>();
  readonly #identities = new Map<string, ManagedServiceIdentityClient>();
  readonly #authorization = new Map<string, AuthorizationManagementClient>();
  readonly #keyVault = new Map<string, KeyVaultManagementClient>();
  readonly #compute = new Map<string, ComputeManagementClient>();

  constructor(config: ResolvedAzureConfig, credential: TokenCredential = createCredential(config)) {
    this.config = config;
    this.credential = credential;
    this.#metrics = armMetrics(config.registry);
  }

  dns(subscriptionId: string): DnsManagementClient {
    return cached(this.#dns, subscriptionId, () =>
      this.#prepare(new DnsManagementClient(this.credential, subscriptionId, this.#options())),
    );
  }

  network(subscriptionId: string): NetworkManagementClient {
    return cached(this.#network, subscriptionId, () =>
      this.#prepare(new NetworkManagementClient(this.credential, subscriptionId, this.#options())),
    );
  }

  resources(subscriptionId: string): ResourceManagementClient {
    return cached(this.#resources, subscriptionId, () =>
      this.#prepare(new ResourceManagementClient(this.credential, subscriptionId, this.#options())),
    );
  }

  identities(subscriptionId: string): ManagedServiceIdentityClient {
    return cached(this.#identities, subscriptionId, () =>
      this.#prepare(new ManagedServiceIdentityClient(this.credential, subscriptionId, this.#options())),
    );
  }

  authorization(subscriptionId: string): AuthorizationManagementClient {
    return cached(this.#authorization, subscriptionId, () =>
      this.#prepare(new AuthorizationManagementClient(this.credential, subscriptionId, this.#options())),
    );
  }

  keyVault(subscriptionId: string): KeyVaultManagementClient {
    return cached(this.#keyVault, subscriptionId, () =>
      this.#prepare(new KeyVaultManagementClient(this.credential, subscriptionId, this.#options())),
    );
  }

  compute(subscriptionId: string): ComputeManagementClient {
    return cached(this.#compute, subscriptionId, () =>
      this.#prepare(new ComputeManagementClient(this.credential, subscriptionId, this.#options())),
    );
  }

  /** The scope of ARM tokens: `<armEndpoint>/.default`. */
  get scope(): string {
    return `${this.config.armEndpoint}/.default`;
  }

  #options(): ClientOptions {
    const endpoint = this.config.armEndpoint;
    return {
      endpoint,
      // Older generated clients build URLs from $host rather than endpoint; set both.
      $host: endpoint,
      credentialScopes: [this.scope],
      ...(this.config.tls ? { tlsOptions: this.config.tls } : {}),
    };
  }

  #prepare<C extends { pipeline: NetworkManagementClient["pipeline"] }>(client: C): C {
    installPolicies(client.pipeline, this.config, this.#metrics);
    return client;
  }
}

function cached<C>(map: Map<string, C>, subscriptionId: string, make: () => C): C {
  const key = subscriptionId.toLowerCase();
  let client = map.get(key);
  if (!client) map.set(key, (client = make()));
  return client;
}

export async function createAzureClients(config: AzureConfig = {}): Promise<AzureClients> {
  return new AzureClients(await resolveAzureConfig(config));
}
