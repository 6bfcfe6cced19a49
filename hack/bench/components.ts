/**
 * The region's software, each piece a process of its own (processes.ts): the operators process
 * (maestro-server and the lifecycle controllers), and per management cluster a maestro-agent and
 * a HyperShift simulator. The lifecycle benchmark and the chaos runs both start them here, so
 * both run the product the way it ships, with the same flags.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadAll } from "js-yaml";
import { NamespaceResource } from "../../operators/api/core.ts";
import { ManagementClusterResource, type ManagementCluster } from "../../operators/api/v1alpha1/index.ts";
import { createAzureClients } from "../../operators/azure/clients.ts";
import { AzureClusterInfrastructure } from "../../operators/cluster/azure.ts";
import { configMapType } from "../../operators/releases/catalog.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { installAdmission } from "../harness/admission.ts";
import type { ArmEmulator } from "../harness/arm-emulator/index.ts";
import { brokerFlags, type BrokerCredentials } from "../harness/broker.ts";
import { freePort, waitFor } from "../harness/ports.ts";
import type { RegionCluster } from "../harness/region.ts";
import {
  catalogConfigMap,
  lifecycleProcess,
  LOCAL_BASE_DOMAIN,
  SERVICE_RESOURCE_GROUP,
  SERVICE_SUBSCRIPTION,
  type StorageInfo,
} from "../harness/stack.ts";
import { spawnComponent, type Component } from "./processes.ts";

/** What a client of the emulated Azure needs, as the ARM emulator's process prints it: ARM with its Entra ID, and the OIDC storage account beside it. */
export type ArmInfo = Pick<ArmEmulator, "endpoint" | "caPath" | "tenantId" | "clientId" | "clientSecret"> & {
  storage: StorageInfo;
};

/**
 * The environment a component's Deployment gives its container (the entries with a literal value,
 * such as NODE_OPTIONS), so that a benchmarked process is sized as the shipped one is.
 */
export function shippedEnv(component: "agent" | "operators"): Record<string, string> {
  const text = readFileSync(repoScript(`config/bases/${component}/deployment.yaml`), "utf8");
  const deployment = loadAll(text).find(
    (d): d is Deployment => typeof d === "object" && d !== null && (d as Deployment).kind === "Deployment",
  );
  const env = deployment?.spec?.template?.spec?.containers?.[0]?.env ?? [];
  return Object.fromEntries(env.flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));
}

interface Deployment {
  kind?: string;
  spec?: { template?: { spec?: { containers?: Array<{ env?: Array<{ name: string; value?: string }> }> } } };
}

/** A path in the repository, for a script to run. */
export const repoScript = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/**
 * What the service cluster holds before any customer: the operators' namespace with the release
 * catalog, and one schedulable ManagementCluster (tier=standard, as the sample cluster asks) per
 * management cluster, each with room for `capacity` clusters; and the admission policy that puts
 * the controllers' finalizers on every new HcpCluster and NodePool.
 */
export async function seedRegion(
  service: KubeClient,
  namespace: string,
  managementClusters: string[],
  capacity: number,
): Promise<void> {
  await service.createIfAbsent(NamespaceResource, { metadata: { name: namespace } });
  await service.apply(configMapType, await catalogConfigMap(namespace), { fieldManager: "hcp-bench" });
  for (const name of managementClusters) {
    await service.createIfAbsent(NamespaceResource, { metadata: { name } });
    const mc: ManagementCluster = {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "ManagementCluster",
      metadata: { name },
      spec: {
        consumerName: name,
        capacity: { maxHostedClusters: capacity },
        schedulable: true,
        region: "eastus",
        labels: { tier: "standard" },
      },
    };
    await service.createIfAbsent(ManagementClusterResource, mc);
  }
  // A region of its own: the policy stays until the region goes.
  await installAdmission(service, namespace);
}

/** The region's parent DNS zone (and its group) in the emulator, as a region's bootstrap makes it. */
export async function ensureParentZone(arm: Omit<ArmInfo, "storage">): Promise<void> {
  const azure = await createAzureClients({
    armEndpoint: arm.endpoint,
    authorityHost: arm.endpoint,
    caFile: arm.caPath,
    credential: arm,
  });
  const parentZone = {
    subscriptionId: SERVICE_SUBSCRIPTION,
    resourceGroup: SERVICE_RESOURCE_GROUP,
    name: LOCAL_BASE_DOMAIN,
  };
  await new AzureClusterInfrastructure(azure, parentZone).ensureParentZone();
}

/** A started component and the base URL of its probes and metrics. */
export interface Served {
  component: Component;
  url: string;
}

/** Waits for `<url>/readyz`; fails early when the process exits first. */
export async function readyAt(url: string, timeoutMs: number, exited?: Promise<unknown>): Promise<void> {
  await waitFor(`${url}/readyz`, async () => (await fetch(`${url}/readyz`)).ok, {
    timeoutMs,
    intervalMs: 200,
    exited,
  });
}

export interface OperatorsProcess {
  serviceKubeconfig: string;
  namespace: string;
  arm: ArmInfo;
  broker: { url: string; credentials: BrokerCredentials };
  logDir: string;
  /** Log file name; default "operators". */
  name?: string;
  /** Run with --leader-elect (replicas). */
  leaderElect?: boolean;
  /** A fixed probe port, so a restarted process answers at the same URL. Default: a free one. */
  port?: number;
  /** Extra environment, e.g. HCP_FAILPOINTS. */
  env?: Record<string, string>;
  /** Flags for node itself (e.g. the bench's GC preload). */
  nodeArgs?: string[];
  /** More operators flags (the chaos region's --region-backup-*). */
  extraArgs?: string[];
}

/** operators/main.ts with maestro-server and the lifecycle controllers; not waited for. */
export async function spawnOperators(opts: OperatorsProcess): Promise<Served> {
  const port = opts.port ?? (await freePort());
  const flags = lifecycleProcess({
    serviceKubeconfig: opts.serviceKubeconfig,
    namespace: opts.namespace,
    httpAddress: `127.0.0.1:${port}`,
    arm: opts.arm,
    storage: opts.arm.storage,
  });
  const { component } = await spawnComponent({
    name: opts.name ?? "operators",
    script: repoScript("operators/main.ts"),
    args: [
      ...flags.args,
      ...brokerFlags(opts.broker.url, opts.broker.credentials),
      ...(opts.leaderElect ? ["--leader-elect"] : []),
      ...(opts.extraArgs ?? []),
    ],
    env: { ...shippedEnv("operators"), ...flags.env, ...opts.env },
    nodeArgs: opts.nodeArgs,
    logDir: opts.logDir,
  });
  return { component, url: `http://127.0.0.1:${port}` };
}

export interface AgentProcess {
  cluster: Pick<RegionCluster, "name" | "kubeconfigPath">;
  broker: { url: string; credentials: BrokerCredentials };
  logDir: string;
  port?: number;
  /** The agent's --status-sync-ms; its default (60 s; watched kinds report through watches) when unset. */
  statusSyncMs?: number;
  env?: Record<string, string>;
  nodeArgs?: string[];
}

/** operators/maestro-agent/main.ts for one management cluster; not waited for. */
export async function spawnAgent(opts: AgentProcess): Promise<Served> {
  const port = opts.port ?? (await freePort());
  const { component } = await spawnComponent({
    name: `maestro-agent-${opts.cluster.name}`,
    script: repoScript("operators/maestro-agent/main.ts"),
    args: [
      `--consumer=${opts.cluster.name}`,
      `--kubeconfig=${opts.cluster.kubeconfigPath}`,
      ...brokerFlags(opts.broker.url, opts.broker.credentials),
      `--http-address=127.0.0.1:${port}`,
      ...(opts.statusSyncMs ? [`--status-sync-ms=${opts.statusSyncMs}`] : []),
    ],
    env: { ...shippedEnv("agent"), ...opts.env },
    nodeArgs: opts.nodeArgs,
    logDir: opts.logDir,
  });
  return { component, url: `http://127.0.0.1:${port}` };
}

export interface SimulatorProcess {
  cluster: Pick<RegionCluster, "name" | "kubeconfigPath">;
  logDir: string;
  provisionDelayMs: number;
  deleteDelayMs: number;
  nodeArgs?: string[];
}

/** hack/hypershift-simulator/main.ts for one management cluster; not waited for. */
export async function spawnSimulator(opts: SimulatorProcess): Promise<Served> {
  const port = await freePort();
  const { component } = await spawnComponent({
    name: `hypershift-simulator-${opts.cluster.name}`,
    script: repoScript("hack/hypershift-simulator/main.ts"),
    args: [
      `--kubeconfig=${opts.cluster.kubeconfigPath}`,
      `--cluster=${opts.cluster.name}`,
      `--provision-delay-ms=${opts.provisionDelayMs}`,
      `--delete-delay-ms=${opts.deleteDelayMs}`,
      `--http-address=127.0.0.1:${port}`,
    ],
    nodeArgs: opts.nodeArgs,
    logDir: opts.logDir,
  });
  return { component, url: `http://127.0.0.1:${port}` };
}
