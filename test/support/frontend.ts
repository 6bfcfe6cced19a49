/**
 * Test doubles for the ARM frontend, used by its tests, `npm run local` and the benchmark (never by
 * the frontend itself): certificates (serving, ARM's client CA and client certificate, and a
 * stranger's), a frontend on a free port, an HTTPS client that talks like ARM, and request bodies.
 */
import { readFile } from "node:fs/promises";
import { Agent, request } from "undici";
import { createCA, issueCert, type CertFiles } from "../../hack/harness/certs.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import type { Registry } from "prom-client";
import type { Logger } from "../../operators/runtime/logger.ts";
import { Frontend, type ConnectionLimits } from "../../operators/frontend/http/server.ts";
import type { OperationDeadlines } from "../../operators/frontend/operations/deadlines.ts";
import type { NotificationOptions } from "../../operators/frontend/operations/notification-uri.ts";
import { OperationNotifier } from "../../operators/frontend/operations/notifier.ts";
import type { ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { createAzureClients, type AzureClients } from "../../operators/azure/clients.ts";

export interface FrontendCerts {
  servingCA: string;
  serving: CertFiles;
  clientCA: string;
  arm: CertFiles;
  /** Signed by a CA the frontend does not trust. */
  stranger: CertFiles;
}

export async function frontendCerts(dir: string): Promise<FrontendCerts> {
  const servingCA = await createCA(dir, "frontend-serving");
  const clientCA = await createCA(dir, "arm-client");
  const strangerCA = await createCA(dir, "stranger");
  const serving = await issueCert(servingCA, dir, {
    name: "frontend",
    commonName: "hcp-frontend",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const arm = await issueCert(clientCA, dir, { name: "arm", commonName: "arm", usage: "client" });
  const stranger = await issueCert(strangerCA, dir, { name: "stranger", commonName: "arm", usage: "client" });
  return { servingCA: servingCA.certPath, serving, clientCA: clientCA.certPath, arm, stranger };
}

export interface TestFrontend {
  frontend: Frontend;
  /** Running when `notifier` was given (as on the elected replica). */
  notifier?: OperationNotifier;
  url: string;
  certs: FrontendCerts;
  stop(): Promise<void>;
}

export async function startTestFrontend(opts: {
  client: KubeClient;
  certs: FrontendCerts;
  catalogNamespace: string;
  pageSize?: number;
  log?: Logger;
  registry?: Registry;
  connections?: Partial<ConnectionLimits>;
  deadlines?: Partial<OperationDeadlines>;
  /** Hosts an Azure-AsyncNotificationUri may name; default ARM's. */
  notificationHosts?: string[];
  /** The notifier's options: one runs beside the frontend (without an election) when given. */
  notifier?: NotificationOptions;
  /** Azure, where creates' customer resources are checked (frontendAzure); none checked without it. */
  azure?: AzureClients;
}): Promise<TestFrontend> {
  const frontend = new Frontend({
    client: opts.client,
    tls: {
      cert: await readFile(opts.certs.serving.certPath),
      key: await readFile(opts.certs.serving.keyPath),
      clientCA: await readFile(opts.certs.clientCA),
    },
    host: "127.0.0.1",
    port: 0,
    catalogNamespace: opts.catalogNamespace,
    ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.registry ? { registry: opts.registry } : {}),
    ...(opts.connections ? { connections: opts.connections } : {}),
    ...(opts.deadlines ? { deadlines: opts.deadlines } : {}),
    ...(opts.notificationHosts ? { notificationHosts: opts.notificationHosts } : {}),
    ...(opts.azure ? { azure: opts.azure } : {}),
  });
  const port = await frontend.listen();
  const url = `https://127.0.0.1:${port}`;
  if (!opts.notifier) return { frontend, url, certs: opts.certs, stop: () => frontend.close() };
  const notifier = new OperationNotifier({
    client: opts.client,
    ...(opts.notificationHosts ? { allowedHosts: opts.notificationHosts } : {}),
    ...opts.notifier,
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.registry ? { registry: opts.registry } : {}),
  });
  const stopNotifier = new AbortController();
  const running = notifier.start(stopNotifier.signal);
  const stop = async (): Promise<void> => {
    stopNotifier.abort();
    await running;
    await frontend.close();
  };
  return { frontend, notifier, url, certs: opts.certs, stop };
}

/** Azure clients for the frontend against the ARM emulator, with the retries main.ts gives it. */
export function frontendAzure(
  arm: Pick<ArmEmulator, "endpoint" | "caPath" | "tenantId" | "clientId" | "clientSecret">,
  registry?: Registry,
): Promise<AzureClients> {
  return createAzureClients({
    armEndpoint: arm.endpoint,
    authorityHost: arm.endpoint,
    caFile: arm.caPath,
    credential: { tenantId: arm.tenantId, clientId: arm.clientId, clientSecret: arm.clientSecret },
    retry: { maxRetries: 2, retryDelayMs: 50, maxRetryDelayMs: 200, maxRetryAfterMs: 2_000 },
    requestTimeoutMs: 10_000,
    ...(registry ? { registry } : {}),
  });
}

export interface ArmResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, or the text when it is not JSON; undefined when empty. */
  body: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string;
  /** Query api-version; null sends none. Default: the client's. */
  apiVersion?: string | null;
  headers?: Record<string, string>;
}

/** JSON, or the text when it is not JSON; undefined when empty. */
function parseReply(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Talks to the frontend like ARM: client certificate, ARM headers, JSON. */
export class ArmClient {
  readonly url: string;
  readonly apiVersion: string;
  readonly headers: Record<string, string>;
  readonly #agent: Agent;

  constructor(
    url: string,
    tls: { ca: Buffer; cert?: Buffer; key?: Buffer },
    opts: { apiVersion?: string; headers?: Record<string, string> } = {},
  ) {
    this.url = url;
    this.apiVersion = opts.apiVersion ?? "2026-06-30-preview";
    this.headers = opts.headers ?? {};
    this.#agent = new Agent({ connect: { ...tls }, connections: 64 });
  }

  static async create(
    url: string,
    certs: FrontendCerts,
    opts: {
      apiVersion?: string;
      headers?: Record<string, string>;
      identity?: "arm" | "stranger" | "none";
    } = {},
  ): Promise<ArmClient> {
    const ca = await readFile(certs.servingCA);
    const which = opts.identity ?? "arm";
    const files = which === "none" ? undefined : which === "arm" ? certs.arm : certs.stranger;
    const tls = files
      ? { ca, cert: await readFile(files.certPath), key: await readFile(files.keyPath) }
      : { ca };
    return new ArmClient(url, tls, opts);
  }

  async send(method: string, path: string, opts: RequestOptions = {}): Promise<ArmResponse> {
    const target = new URL(path, this.url);
    const version = opts.apiVersion === undefined ? this.apiVersion : opts.apiVersion;
    if (version !== null && !target.searchParams.has("api-version"))
      target.searchParams.set("api-version", version);
    const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const res = await request(target, {
      method: method as "GET",
      dispatcher: this.#agent,
      headers: {
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...this.headers,
        ...opts.headers,
      },
      ...(body !== undefined ? { body } : {}),
    });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers[k] = v;
    return { status: res.statusCode, headers, body: parseReply(await res.body.text()) };
  }

  /** Follows an Azure-AsyncOperation URL until the status is terminal; returns the last status body. */
  async poll(statusUrl: string, timeoutMs = 60_000, intervalMs = 100): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    let last: Record<string, unknown> = {};
    while (Date.now() < deadline) {
      const r = await this.send("GET", statusUrl);
      last = (r.body ?? {}) as Record<string, unknown>;
      if (r.status === 200 && ["Succeeded", "Failed", "Canceled"].includes(String(last["status"])))
        return last;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    throw new Error(`operation ${statusUrl} not terminal after ${timeoutMs} ms: ${JSON.stringify(last)}`);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

export function clusterPath(sub: string, rg: string, name: string): string {
  return `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;
}

export function nodePoolPath(sub: string, rg: string, cluster: string, name: string): string {
  return `${clusterPath(sub, rg, cluster)}/nodePools/${name}`;
}

export const uami = (sub: string, name: string): string =>
  `/subscriptions/${sub}/resourceGroups/identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}`;

/** The control plane operators' identities of a cluster (every one ARO HCP requires for 4.19). */
function controlPlaneIdentities(sub: string): Record<string, string> {
  return {
    "control-plane": uami(sub, "cp-control-plane"),
    "cluster-api-azure": uami(sub, "cp-capz"),
    "cloud-controller-manager": uami(sub, "cp-ccm"),
    ingress: uami(sub, "cp-ingress"),
    "disk-csi-driver": uami(sub, "cp-disk"),
    "file-csi-driver": uami(sub, "cp-file"),
    "image-registry": uami(sub, "cp-image-registry"),
    "cloud-network-config": uami(sub, "cp-cnc"),
  };
}

/**
 * The identity block ARO HCP wants beside those operators: every control plane operator's identity
 * and the service managed identity assigned to the cluster, and nothing else (data plane
 * operators' identities are not assigned to it).
 */
export function assignedIdentities(
  operators: Record<string, string>,
  service: string,
): Record<string, unknown> {
  const ids = [...Object.values(operators), service];
  return { type: "UserAssigned", userAssignedIdentities: Object.fromEntries(ids.map((id) => [id, {}])) };
}

/** A valid 2026-06-30-preview cluster body. */
export function clusterBody(
  sub: string,
  opts: { prefix?: string; version?: string } = {},
): Record<string, unknown> {
  const net = `/subscriptions/${sub}/resourceGroups/customer-net/providers/Microsoft.Network`;
  const operators = controlPlaneIdentities(sub);
  return {
    location: "eastus",
    tags: { team: "hcp" },
    identity: assignedIdentities(operators, uami(sub, "service")),
    properties: {
      version: { id: opts.version ?? "4.19", channelGroup: "stable" },
      ...(opts.prefix ? { dns: { baseDomainPrefix: opts.prefix } } : {}),
      api: { visibility: "Public", authorizedCidrs: ["10.0.0.0/8"] },
      platform: {
        subnetId: `${net}/virtualNetworks/vnet/subnets/nodes`,
        vnetIntegrationSubnetId: `${net}/virtualNetworks/vnet/subnets/integration`,
        networkSecurityGroupId: `${net}/networkSecurityGroups/nsg`,
        operatorsAuthentication: {
          userAssignedIdentities: {
            controlPlaneOperators: operators,
            dataPlaneOperators: {
              "disk-csi-driver": uami(sub, "dp-disk"),
              "file-csi-driver": uami(sub, "dp-file"),
              "image-registry": uami(sub, "dp-image-registry"),
            },
            serviceManagedIdentity: uami(sub, "service"),
          },
        },
      },
    },
  };
}

/**
 * The body with etcd encrypted by the customer's key (`kms`, in the body's api-version's shape)
 * and the kms operator identity that uses it, assigned to the cluster as ARO HCP wants.
 */
export function withCustomerKey(
  body: Record<string, unknown>,
  sub: string,
  kms: Record<string, unknown>,
): Record<string, unknown> {
  const out = structuredClone(body) as {
    identity: { userAssignedIdentities: Record<string, unknown> };
    properties: {
      etcd?: unknown;
      platform: {
        operatorsAuthentication: {
          userAssignedIdentities: { controlPlaneOperators: Record<string, string> };
        };
      };
    };
  };
  const id = uami(sub, "cp-kms");
  out.properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators.kms = id;
  out.identity.userAssignedIdentities[id] = {};
  out.properties.etcd = {
    dataEncryption: { keyManagementMode: "CustomerManaged", customerManaged: { encryptionType: "KMS", kms } },
  };
  return out;
}

/** A valid 2026-06-30-preview node pool body. */
export function nodePoolBody(opts: { replicas?: number; version?: string } = {}): Record<string, unknown> {
  return {
    location: "eastus",
    properties: {
      version: { id: opts.version ?? "4.19", channelGroup: "stable" },
      platform: { vmSize: "Standard_D8s_v3", osDisk: { sizeGiB: 128 } },
      replicas: opts.replicas ?? 2,
      labels: [{ key: "role", value: "worker" }],
      taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" }],
    },
  };
}

export function externalAuthPath(sub: string, rg: string, cluster: string, name: string): string {
  return `${clusterPath(sub, rg, cluster)}/externalAuths/${name}`;
}

/**
 * An external auth body as ARO HCP takes it (the same writable fields in every api-version):
 * Microsoft Entra ID as the issuer, the console as a confidential client and the CLI as a public
 * one of the same app registration, usernames from the email claim, groups from the groups claim.
 */
export function externalAuthBody(opts: {
  tenant: string;
  app: string;
  ca?: string;
}): Record<string, unknown> {
  return {
    properties: {
      issuer: {
        url: `https://login.microsoftonline.com/${opts.tenant}/v2.0`,
        audiences: [opts.app],
        ...(opts.ca ? { ca: opts.ca } : {}),
      },
      clients: [
        {
          component: { name: "console", authClientNamespace: "openshift-console" },
          clientId: opts.app,
          type: "Confidential",
        },
        {
          component: { name: "cli", authClientNamespace: "openshift-console" },
          clientId: opts.app,
          extraScopes: ["offline_access"],
          type: "Public",
        },
      ],
      claim: {
        mappings: { username: { claim: "email", prefixPolicy: "NoPrefix" }, groups: { claim: "groups" } },
        validationRules: [
          { type: "RequiredClaim", requiredClaim: { claim: "tid", requiredValue: opts.tenant } },
        ],
      },
    },
  };
}
