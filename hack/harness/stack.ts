/**
 * The region's software on top of its infrastructure: on the service cluster the release catalog,
 * the ManagementCluster CRs, the parent DNS zone in the ARM emulator, the OIDC storage emulator
 * the cluster controller publishes issuers to, and the controllers
 * (maestro-server, cluster, node pool, management cluster, maintenance); on each management cluster a
 * maestro-agent and the HyperShift simulator. Everything runs in this process, each controller
 * exactly as operators/main.ts would run it, so `npm run local` and the tests see one system. A
 * management cluster's agent can be stopped and started again alone (stopAgent, startAgent), and
 * so can the maintenance controller (stopMaintenance, startMaintenance).
 */
import { KubeConfig } from "@kubernetes/client-node";
import { readFile } from "node:fs/promises";
import { load } from "js-yaml";
import { NamespaceResource } from "../../operators/api/core.ts";
import { ManagementClusterResource, type ManagementCluster } from "../../operators/api/v1alpha1/index.ts";
import { createBlobStore } from "../../operators/azure/blob.ts";
import { createAzureClients } from "../../operators/azure/clients.ts";
import { AzureClusterInfrastructure } from "../../operators/cluster/azure.ts";
import { ClusterController, type ClusterControllerOptions } from "../../operators/cluster/controller.ts";
import { BlobIssuerDocuments } from "../../operators/cluster/oidc.ts";
import type { RegionSettings } from "../../operators/api/v1alpha1/clusternames.ts";
import type { ParentZone } from "../../operators/cluster/infrastructure.ts";
import { HyperShiftSimulator } from "../hypershift-simulator/controller.ts";
import { HostedApis, type HostedApisOptions, type ServedApi } from "./hosted-apis.ts";
import { MaestroAgent } from "../../operators/maestro-agent/controller.ts";
import { AgentCertificateSigner } from "../../operators/maestro-server/agent-certificates.ts";
import { MaestroServer } from "../../operators/maestro-server/controller.ts";
import { ManagementClusterController } from "../../operators/managementcluster/controller.ts";
import { RegionMonitor } from "../../operators/monitor/controller.ts";
import { openMetering, type Metering, type MeteringSettings } from "../../operators/usage/metering.ts";
import { NodePoolController } from "../../operators/nodepool/controller.ts";
import { SoftDeletePurge } from "../../operators/softdelete/controller.ts";
import { ReleaseGraphController } from "../../operators/releasegraph/controller.ts";
import { ExternalAuthController } from "../../operators/externalauth/controller.ts";
import { BreakglassController } from "../../operators/breakglass/controller.ts";
import {
  AccessSessionController,
  type AccessSessionControllerOptions,
} from "../../operators/accesssession/controller.ts";
import { MaintenanceController } from "../../operators/maintenance/controller.ts";
import { regionTaskRegistry } from "../../operators/maintenance/region-tasks.ts";
import { RolloutController } from "../../operators/rollout/controller.ts";
import { CATALOG_KEY, configMapType } from "../../operators/releases/catalog.ts";
import { ClusterRegistry, type Cluster } from "../../operators/runtime/clusters.ts";
import { KubeClient, type KubeObject } from "../../operators/runtime/kube.ts";
import { silentLogger, type Logger } from "../../operators/runtime/logger.ts";
import type { Runnable } from "../../operators/runtime/manager.ts";
import { installAdmission, removeAdmission } from "./admission.ts";
import type { ArmEmulator } from "./arm-emulator/index.ts";
import type { BrokerCredentials } from "./broker.ts";
import { WEB_CONTAINER, type StorageEmulator } from "./storage-emulator/index.ts";

export const CATALOG_FILE = new URL("../../config/bases/operators/release-catalog.yaml", import.meta.url);
/** The sample ManagementClusters (mgmt-1, mgmt-2) are used as they are; others get a default. */
const SAMPLES_DIR = new URL("../../config/samples/", import.meta.url);
export const LOCAL_BASE_DOMAIN = "hcp.example.com";
/** The service's own subscription and resource group, where the region's parent zone lives. */
export const SERVICE_SUBSCRIPTION = "00000000-0000-4000-8000-00000000aaaa";
export const SERVICE_RESOURCE_GROUP = "hcp-service";

const namespaceType = NamespaceResource;

export interface StackOptions {
  serviceKubeconfig: string;
  management: Array<{ name: string; kubeconfigPath: string }>;
  broker: { url: string; credentials(identity: string): Promise<BrokerCredentials> };
  arm: Pick<ArmEmulator, "endpoint" | "caPath" | "tenantId" | "clientId" | "clientSecret">;
  /** Where the clusters' OIDC documents are published and served from (the region's storage account and Front Door). */
  storage: StorageInfo;
  /** Where the catalog lives and the operators run. Default hcp-system. */
  namespace?: string;
  region?: Partial<RegionSettings>;
  simulator?: { provisionDelayMs?: number; deleteDelayMs?: number };
  /**
   * HostedClusters (by name: the HcpClusters' DNS prefixes) whose API a real kube-apiserver serves
   * (hosted-apis.ts), on the region's etcd with the region's binaries.
   */
  hostedApis?: Omit<HostedApisOptions, "cluster" | "log">;
  /** The access session controller's policy and clock (default: the product's). */
  accessSessions?: Pick<AccessSessionControllerOptions, "policy" | "now">;
  /** How long the cluster controller leaves a user error (quota, permissions) before trying again. */
  userErrorRecheckMs?: number;
  /** How long a rotated-out signing key still verifies (default: a year and a day). */
  signingKeys?: ClusterControllerOptions["signingKeys"];
  /** The work template revision the cluster controller builds and RefreshWorkTemplate raises to (default the constant). */
  workTemplateRevision?: () => number;
  /**
   * Soft delete: a deleted cluster's Azure resources, issuer and keys are kept this long for an
   * undelete, and the purge (operators/softdelete) runs here, looking every purgeIntervalMs at
   * most (default: off, deletion removes everything at once).
   */
  softDelete?: { retentionMs: number; purgeIntervalMs?: number };
  /** The break-glass controller's clock and how long it keeps expired credentials (default: Date.now, a day). */
  breakglass?: { now?: () => number; expiredRetentionMs?: number };
  /**
   * Run the cluster, node pool and management cluster controllers here (default true). The crash
   * test runs them in an operators process of its own instead.
   */
  lifecycleControllers?: boolean;
  /** How often the agents beat (default 10 s); the service calls an agent not Connected after three missed. */
  agentHeartbeatMs?: number;
  /**
   * Agents renew their broker certificates (operators/maestro-agent/certificate-renewal.ts):
   * maestro-server signs with this CA (the broker's), each agent keeps its credentials in the
   * Secret `maestro-agent/maestro-agent-broker` on its management cluster. Default: off.
   */
  agentCertificates?: {
    signerCertPath: string;
    signerKeyPath: string;
    lifetimeMs?: number;
    minIntervalMs?: number;
  };
  /**
   * Metering (issue 35): the usage recorder and exporter run here as operators/main.ts runs them
   * with --metering-*, the ledger in this PostgreSQL, the exporter reporting to `endpoint` (the
   * marketplace emulator, trusted through `caPath`) with the ARM emulator's tokens. Default: off.
   */
  metering?: { databaseUrl: string; endpoint: string; caPath: string; planId: string; intervalMs?: number };
  log?: Logger;
}

/** Where each agent keeps its broker credentials when agentCertificates is on, as deployed. */
export const AGENT_CREDENTIALS_SECRET = "maestro-agent/maestro-agent-broker";

export type StorageInfo = Pick<StorageEmulator, "blobServiceUrl" | "webEndpoint" | "caPath">;

/** The `$web` container of the emulated OIDC storage account. */
export function oidcContainerUrl(storage: Pick<StorageEmulator, "blobServiceUrl">): string {
  return `${storage.blobServiceUrl}/${WEB_CONTAINER}`;
}

export interface Stack {
  namespace: string;
  region: RegionSettings;
  parentZone: ParentZone;
  /** Stops one management cluster's maestro-agent, as if its process or host went away. */
  stopAgent(name: string): Promise<void>;
  /** Starts a fresh maestro-agent for a management cluster whose agent was stopped (a restart). */
  startAgent(name: string): void;
  /** The real API server of a HostedCluster named in options.hostedApis, once it serves. */
  hostedApi(name: string): ServedApi | undefined;
  /** Stops the maintenance controller, as if the operators went away mid-step. */
  stopMaintenance(): Promise<void>;
  /** Starts a new maintenance controller (new queue, new admissions) after stopMaintenance. */
  startMaintenance(): void;
  stop(): Promise<void>;
}

/** How far past today the harness moves the shipped catalog's earliest end of life. */
const END_OF_LIFE_HORIZON_MS = 365 * 24 * 3600 * 1000;

/**
 * The catalog text with its end-of-life dates moved, their spacing kept, so the earliest is at
 * least a year from `now`: the shipped dates are real (4.18's has passed), and a local region or a
 * test must not meet an end of life by the calendar. Tests of end of life write catalogs of their own.
 */
export function endOfLifeFromNow(catalogYaml: string, now: number): string {
  const field = /(endOfLifeTimestamp:\s*["']?)(\d[\dT:.+Z-]*)/g;
  const dates = [...catalogYaml.matchAll(field)].map((m) => Date.parse(m[2] ?? "")).filter((t) => t > 0);
  if (dates.length === 0) return catalogYaml;
  const shift = Math.max(0, now + END_OF_LIFE_HORIZON_MS - Math.min(...dates));
  return catalogYaml.replace(field, (whole, key: string, value: string) => {
    const t = Date.parse(value);
    return Number.isNaN(t) ? whole : key + new Date(t + shift).toISOString().replace(/\.\d{3}Z$/, "Z");
  });
}

/** A management cluster's real hosted APIs, when the stack was asked for them. */
function servedApis(mgmt: Cluster, opts: StackOptions["hostedApis"], log: Logger): HostedApis[] {
  return opts ? [new HostedApis({ cluster: mgmt, log, ...opts })] : [];
}

/** The catalog ConfigMap from config/bases/operators, placed in `namespace`, its end-of-life dates a year or more away. */
export async function catalogConfigMap(namespace: string, now = Date.now()): Promise<KubeObject> {
  const cm = load(await readFile(CATALOG_FILE, "utf8")) as KubeObject & { data: Record<string, string> };
  const data = { ...cm.data, [CATALOG_KEY]: endOfLifeFromNow(cm.data[CATALOG_KEY] ?? "", now) };
  return { ...cm, metadata: { ...cm.metadata, namespace }, data };
}

/**
 * The flags and environment of an operators process (operators/main.ts) that runs the lifecycle
 * controllers against a local region and its ARM emulator, for tests and benchmarks that run it
 * apart.
 */
export function lifecycleProcess(opts: {
  serviceKubeconfig: string;
  namespace: string;
  httpAddress: string;
  arm: Pick<ArmEmulator, "endpoint" | "caPath" | "tenantId" | "clientId" | "clientSecret">;
  storage: StorageInfo;
}): { args: string[]; env: Record<string, string> } {
  const { arm, storage } = opts;
  return {
    args: [
      `--kubeconfig=${opts.serviceKubeconfig}`,
      `--namespace=${opts.namespace}`,
      `--http-address=${opts.httpAddress}`,
      `--base-domain=${LOCAL_BASE_DOMAIN}`,
      `--parent-zone-subscription=${SERVICE_SUBSCRIPTION}`,
      `--parent-zone-resource-group=${SERVICE_RESOURCE_GROUP}`,
      `--azure-endpoint=${arm.endpoint}`,
      `--azure-authority-host=${arm.endpoint}`,
      `--azure-ca=${arm.caPath}`,
      `--oidc-issuer-base-url=${storage.webEndpoint}`,
      `--oidc-container-url=${oidcContainerUrl(storage)}`,
      `--oidc-storage-ca=${storage.caPath}`,
      // A deletion removes everything at once, as the in-process stack's default: the tests, the
      // chaos table and the bench count what a deletion leaves; soft delete has its own test.
      "--soft-delete-retention-seconds=0",
    ],
    env: {
      AZURE_TENANT_ID: arm.tenantId,
      AZURE_CLIENT_ID: arm.clientId,
      AZURE_CLIENT_SECRET: arm.clientSecret,
    },
  };
}

/** Writes what the service cluster holds before any customer arrives. */
async function seedServiceCluster(
  service: KubeClient,
  namespace: string,
  management: StackOptions["management"],
): Promise<void> {
  await service.createIfAbsent(namespaceType, { metadata: { name: namespace } });
  const catalog = await catalogConfigMap(namespace);
  await service.apply(configMapType, catalog, { fieldManager: "hcp-local" });
  for (const [i, m] of management.entries()) {
    await service.createIfAbsent(namespaceType, { metadata: { name: m.name } });
    const sample = await readFile(new URL(`managementcluster-${m.name}.yaml`, SAMPLES_DIR), "utf8").catch(
      () => undefined,
    );
    const mc: ManagementCluster = sample
      ? (load(sample) as ManagementCluster)
      : {
          apiVersion: "hcp.aro.dev/v1alpha1",
          kind: "ManagementCluster",
          metadata: { name: m.name },
          spec: {
            consumerName: m.name,
            capacity: { maxHostedClusters: 50 },
            schedulable: true,
            labels: { tier: "standard", "topology.kubernetes.io/zone": `local-${i + 1}` },
            region: "eastus",
          },
        };
    await service.createIfAbsent(ManagementClusterResource, mc);
  }
}

/** Metering's recorder and exporter when the option is given, else nothing to run or close. */
async function meteringOf(
  settings: StackOptions["metering"],
  credential: MeteringSettings["credential"],
  service: Cluster,
  log: Logger,
): Promise<Pick<Metering, "runnables" | "close">> {
  if (!settings) return { runnables: [], close: () => Promise.resolve() };
  return openMetering({ ...settings, credential }, service, log);
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const log = opts.log ?? silentLogger;
  const namespace = opts.namespace ?? "hcp-system";
  const region: RegionSettings = {
    environment: "local",
    baseDomain: LOCAL_BASE_DOMAIN,
    managedIdentitiesKeyVault: "hcp-local-mi",
    pullSecret: '{"auths":{}}',
    ...opts.region,
  };
  const parentZone: ParentZone = {
    subscriptionId: SERVICE_SUBSCRIPTION,
    resourceGroup: SERVICE_RESOURCE_GROUP,
    name: region.baseDomain,
  };
  const registry = new ClusterRegistry(log);
  const serviceKc = new KubeConfig();
  serviceKc.loadFromFile(opts.serviceKubeconfig);
  const service = registry.add("service", serviceKc);
  await seedServiceCluster(service.client, namespace, opts.management);
  await installAdmission(service.client, namespace);

  const azure = await createAzureClients({
    armEndpoint: opts.arm.endpoint,
    authorityHost: opts.arm.endpoint,
    caFile: opts.arm.caPath,
    credential: {
      tenantId: opts.arm.tenantId,
      clientId: opts.arm.clientId,
      clientSecret: opts.arm.clientSecret,
    },
  });
  const infra = new AzureClusterInfrastructure(azure, parentZone);
  await infra.ensureParentZone();
  const oidc = {
    issuerBaseURL: opts.storage.webEndpoint,
    documents: new BlobIssuerDocuments(
      await createBlobStore({
        containerUrl: oidcContainerUrl(opts.storage),
        credential: azure.credential,
        caFile: opts.storage.caPath,
      }),
    ),
  };

  const creds = async (identity: string) => {
    const c = await opts.broker.credentials(identity);
    return { url: opts.broker.url, caFile: c.caPath, certFile: c.certPath, keyFile: c.keyPath };
  };
  const certificates = opts.agentCertificates;
  const server = new MaestroServer({
    cluster: service,
    log,
    broker: { ...(await creds("maestro")), clientId: `maestro-${process.pid}` },
    ...(certificates && {
      agentCertificates: new AgentCertificateSigner({
        certFile: certificates.signerCertPath,
        keyFile: certificates.signerKeyPath,
        lifetimeMs: certificates.lifetimeMs,
        minIntervalMs: certificates.minIntervalMs,
        log,
      }),
    }),
  });
  const metering = await meteringOf(opts.metering, azure.credential, service, log);
  const runnables: Runnable[] = [server, ...metering.runnables];
  const hostedApis: HostedApis[] = [];
  let maintenance: (() => MaintenanceController) | undefined;
  if (opts.lifecycleControllers !== false) {
    const clusterController = new ClusterController({
      cluster: service,
      namespace,
      region,
      parentZone,
      infra,
      oidc,
      log,
      userErrorRecheckMs: opts.userErrorRecheckMs,
      signingKeys: opts.signingKeys,
      workTemplateRevision: opts.workTemplateRevision,
      softDeleteRetentionMs: opts.softDelete?.retentionMs,
    });
    // As operators/main.ts wires it: the rotation's steps act through the cluster controller.
    const tasks = regionTaskRegistry({
      service,
      namespace,
      signingKeys: clusterController.signingKeyRotation,
      workTemplateRevision: opts.workTemplateRevision,
    });
    maintenance = () => new MaintenanceController({ cluster: service, tasks, log });
    runnables.push(
      clusterController,
      new NodePoolController({ cluster: service, namespace, region, log }),
      new ReleaseGraphController({ cluster: service, namespace, log }),
      new ExternalAuthController({ cluster: service, region, log }),
      new BreakglassController({ cluster: service, region, namespace, log, ...opts.breakglass }),
      new AccessSessionController({ cluster: service, region, namespace, log, ...opts.accessSessions }),
      new ManagementClusterController({ cluster: service, agents: server.agents, log }),
      new RolloutController({ cluster: service, log }),
      new RegionMonitor({ cluster: service, agents: server.agents }),
    );
    if (opts.softDelete)
      runnables.push(
        new SoftDeletePurge({
          cluster: service,
          namespace,
          retained: clusterController.retainedResources,
          intervalMs: opts.softDelete.purgeIntervalMs,
          log,
        }),
      );
  }
  const agents = new Map<string, () => MaestroAgent>();
  for (const m of opts.management) {
    const kc = new KubeConfig();
    kc.loadFromFile(m.kubeconfigPath);
    const mgmt = registry.add(m.name, kc);
    const broker = await creds(m.name);
    if (certificates)
      await new KubeClient(m.name, kc).createIfAbsent(namespaceType, {
        metadata: { name: AGENT_CREDENTIALS_SECRET.split("/")[0] ?? "" },
      });
    agents.set(
      m.name,
      () =>
        new MaestroAgent({
          consumer: m.name,
          kube: new KubeClient(m.name, kc),
          broker,
          // HyperShift's progress shows up in feedback at this pace (OCM's default is 10 s).
          statusSyncMs: 1_000,
          heartbeatMs: opts.agentHeartbeatMs,
          ...(certificates && { credentialsSecret: AGENT_CREDENTIALS_SECRET }),
          log,
        }),
    );
    runnables.push(new HyperShiftSimulator({ cluster: mgmt, log, ...opts.simulator }));
    hostedApis.push(...servedApis(mgmt, opts.hostedApis, log));
  }
  runnables.push(...hostedApis);
  const stop = new AbortController();
  const running = runnables.map((r) =>
    r.start(stop.signal).catch((err: unknown) => log.error("a stack component stopped", err)),
  );
  const runningAgents = new Map<string, { stop: AbortController; done: Promise<void> }>();
  const startAgent = (name: string): void => {
    const agent = agents.get(name);
    if (!agent) throw new Error(`no management cluster ${name} in the stack`);
    if (runningAgents.has(name)) throw new Error(`the agent of ${name} runs already`);
    const agentStop = new AbortController();
    const done = agent()
      .start(agentStop.signal)
      .catch((err: unknown) => log.error("a stack agent stopped", err));
    runningAgents.set(name, { stop: agentStop, done });
  };
  const stopAgent = async (name: string): Promise<void> => {
    const agent = runningAgents.get(name);
    if (!agent) return;
    runningAgents.delete(name);
    agent.stop.abort();
    await agent.done;
  };
  for (const name of agents.keys()) startAgent(name);
  let runningMaintenance: { stop: AbortController; done: Promise<void> } | undefined;
  const startMaintenance = (): void => {
    if (!maintenance) throw new Error("the stack runs no lifecycle controllers");
    if (runningMaintenance) throw new Error("the maintenance controller runs already");
    const controllerStop = new AbortController();
    const done = maintenance()
      .start(controllerStop.signal)
      .catch((err: unknown) => log.error("the stack's maintenance controller stopped", err));
    runningMaintenance = { stop: controllerStop, done };
  };
  const stopMaintenance = async (): Promise<void> => {
    const current = runningMaintenance;
    runningMaintenance = undefined;
    current?.stop.abort();
    await current?.done;
  };
  if (maintenance) startMaintenance();
  return {
    namespace,
    region,
    parentZone,
    stopAgent,
    startAgent,
    stopMaintenance,
    startMaintenance,
    hostedApi: (name) => hostedApis.map((h) => h.served(name)).find((s) => s !== undefined),
    async stop() {
      stop.abort();
      await Promise.all([...running, stopMaintenance(), ...[...runningAgents.keys()].map(stopAgent)]);
      await metering.close();
      await removeAdmission(service.client).catch((err: unknown) =>
        log.error("could not remove the admission policy", err),
      );
      registry.stopAll();
    },
  };
}
