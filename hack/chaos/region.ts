/**
 * The region a chaos run breaks: etcd, the kube-apiservers and mosquitto from the harness; the
 * ARM emulator in this process (its fault knobs and inventory are what the run drives and reads);
 * every MQTT client behind the chaos proxy (mqtt-proxy.ts); and the product as processes of their
 * own (hack/bench/components.ts): the operators process (one replica, or two with leader
 * election), a maestro-agent and a HyperShift simulator per management cluster. Each process sits
 * in a slot that can kill it and start it again, with a failpoint armed or a skewed clock. The
 * operators back the region up every few seconds (region-backup.ts).
 */
import { KubeConfig } from "@kubernetes/client-node";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { ConfigMapResource, NamespaceResource, SecretResource } from "../../operators/api/core.ts";
import { REPORT_NAME as ORPHAN_REPORT_NAME } from "../../operators/orphansweep/report.ts";
import {
  HostedClusterResource,
  NodePoolResource as HyperShiftNodePoolResource,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  ManagementClusterResource,
  NodePoolResource,
  RolloutResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
  type ManagementCluster,
  type NodePool,
  type Rollout,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import {
  AppliedManifestWorkResource,
  type AppliedManifestWork,
} from "../../operators/maestro-agent/appliedwork.ts";
import { SIGNING_KEY_LABEL } from "../../operators/cluster/oidc.ts";
import { keyId, keyringFromSecretData } from "../../operators/cluster/signing-keyring.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { startArmEmulator, type ArmEmulator } from "../harness/arm-emulator/index.ts";
import { startStorageEmulator, type StorageEmulator } from "../harness/storage-emulator/index.ts";
import { freePort } from "../harness/ports.ts";
import { startRegion, type Region, type RegionCluster } from "../harness/region.ts";
import {
  ensureParentZone,
  readyAt,
  seedRegion,
  spawnAgent,
  spawnOperators,
  spawnSimulator,
  type ArmInfo,
  type Served,
} from "../bench/components.ts";
import type { Component } from "../bench/processes.ts";
import type { Snapshot } from "./invariants.ts";
import { startMqttProxy, type MqttProxy } from "./mqtt-proxy.ts";
import { startChaosMetering, type ChaosMetering } from "./metering.ts";
import { chaosBackup, REGION_BACKUP_CONTAINER, type ChaosBackup } from "./region-backup.ts";
import type { RolloutWorld, StoredKeyring } from "./rollout-invariants.ts";

export const OPERATORS_NAMESPACE = "hcp-system";
const READY_TIMEOUT_MS = 120_000;

export interface ChaosRegionOptions {
  managementClusters: number;
  /** Operators replicas; more than one runs them with leader election. */
  replicas: number;
  /** Capacity of each ManagementCluster. */
  capacity: number;
  simulator: { provisionDelayMs: number; deleteDelayMs: number };
  /** Passed to the agents: how often they read status back (their default is 10 s, OCM's). */
  agentStatusSyncMs?: number;
  logDir: string;
}

export interface Restart {
  /** Environment for the new process (HCP_FAILPOINTS, HCP_CLOCK_OFFSET_MS). */
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** Wait until it is ready (default true; false for a process expected to die at a failpoint). */
  ready?: boolean;
  /** What happens while the process is down, before the new one starts. */
  whileDown?: () => Promise<void>;
}

/** One component process that a fault kills and starts again, at the same probe address. */
export class Slot {
  readonly name: string;
  #served: Served;
  readonly #spawn: (restart: Restart) => Promise<Served>;

  constructor(name: string, served: Served, spawn: (restart: Restart) => Promise<Served>) {
    this.name = name;
    this.#served = served;
    this.#spawn = spawn;
  }

  get component(): Component {
    return this.#served.component;
  }

  get url(): string {
    return this.#served.url;
  }

  get pid(): number {
    return this.#served.component.child.pid ?? -1;
  }

  /** Whether the current process died of SIGKILL (a failpoint, or a kill). */
  killed(): boolean {
    return this.#served.component.child.signalCode === "SIGKILL";
  }

  /** SIGKILL, then a new process as `restart` says. */
  async restart(restart: Restart = {}): Promise<void> {
    await this.#served.component.kill();
    await restart.whileDown?.();
    this.#served = await this.#spawn(restart);
    if (restart.ready !== false) await this.ready();
  }

  ready(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    return readyAt(this.url, timeoutMs, this.component.exited);
  }

  stop(): Promise<void> {
    return this.#served.component.stop();
  }
}

export interface ChaosRegion {
  region: Region;
  arm: ArmEmulator;
  proxy: MqttProxy;
  service: KubeClient;
  management: KubeClient[];
  operators: Slot[];
  agents: Slot[];
  simulators: Slot[];
  /** The region's backup container and key, which the operators write to. */
  backup: ChaosBackup;
  /** The usage ledger and the metering API the operators report to. */
  metering: ChaosMetering;
  logDir: string;
  /** Everything a verdict is made from, read now. */
  snapshot(signal?: AbortSignal): Promise<Snapshot>;
  stop(): Promise<void>;
}

function clientFor(c: Pick<RegionCluster, "name" | "kubeconfigPath">): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(c.kubeconfigPath);
  return new KubeClient(c.name, kc);
}

async function operatorSlots(
  region: Region,
  reach: { arm: ArmInfo; proxy: MqttProxy; backup: ChaosBackup; metering: ChaosMetering },
  opts: ChaosRegionOptions,
): Promise<Slot[]> {
  const { arm, proxy, backup, metering } = reach;
  const service = region.clusters.find((c) => c.role === "service")!;
  const credentials = await region.broker!.credentials("maestro");
  const slots: Slot[] = [];
  for (let i = 0; i < opts.replicas; i++) {
    const port = await freePort();
    const spawn = (restart: Restart): Promise<Served> =>
      spawnOperators({
        serviceKubeconfig: service.kubeconfigPath,
        namespace: OPERATORS_NAMESPACE,
        arm,
        broker: { url: proxy.url, credentials },
        logDir: opts.logDir,
        name: opts.replicas > 1 ? `operators-${i}` : "operators",
        leaderElect: opts.replicas > 1,
        port,
        env: restart.env,
        extraArgs: [...backup.flags, ...metering.flags],
      });
    slots.push(new Slot(`operators-${i}`, await spawn({}), spawn));
  }
  return slots;
}

async function managementSlots(
  region: Region,
  proxy: MqttProxy,
  opts: ChaosRegionOptions,
): Promise<{ agents: Slot[]; simulators: Slot[] }> {
  const agents: Slot[] = [];
  const simulators: Slot[] = [];
  for (const cluster of region.clusters.filter((c) => c.role === "management")) {
    const credentials = await region.broker!.credentials(cluster.name);
    const port = await freePort();
    const spawn = (restart: Restart): Promise<Served> =>
      spawnAgent({
        cluster,
        broker: { url: proxy.url, credentials },
        logDir: opts.logDir,
        port,
        statusSyncMs: opts.agentStatusSyncMs,
        env: restart.env,
        nodeArgs: restart.nodeArgs,
      });
    agents.push(new Slot(`maestro-agent-${cluster.name}`, await spawn({}), spawn));
    const simulate = (): Promise<Served> =>
      spawnSimulator({ cluster, logDir: opts.logDir, ...opts.simulator });
    simulators.push(new Slot(`hypershift-simulator-${cluster.name}`, await simulate(), simulate));
  }
  return { agents, simulators };
}

export async function startChaosRegion(opts: ChaosRegionOptions): Promise<ChaosRegion> {
  await mkdir(opts.logDir, { recursive: true });
  const region = await startRegion({ managementClusters: opts.managementClusters, postgres: true });
  const started: Slot[] = [];
  let arm: ArmEmulator | undefined;
  let storage: StorageEmulator | undefined;
  let proxy: MqttProxy | undefined;
  let metering: ChaosMetering | undefined;
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.stop()));
    await metering?.stop();
    await proxy?.stop();
    await arm?.stop();
    await storage?.stop();
    await region.stop();
  };
  try {
    const service = clientFor(region.clusters.find((c) => c.role === "service")!);
    const management = region.clusters.filter((c) => c.role === "management").map(clientFor);
    await seedRegion(
      service,
      OPERATORS_NAMESPACE,
      management.map((m) => m.cluster),
      opts.capacity,
    );
    arm = await startArmEmulator({ workDir: region.workDir, asyncDelayMs: 100 });
    storage = await startStorageEmulator({
      workDir: region.workDir,
      verifyBearer: arm.verifyBearer,
      containers: [REGION_BACKUP_CONTAINER],
    });
    await ensureParentZone(arm);
    proxy = await startMqttProxy(region.broker!, join(region.workDir, "mqtt-proxy"));
    const backup = await chaosBackup(region.workDir, storage, arm);
    metering = await startChaosMetering(region.postgres!, arm, region.workDir);
    const operators = await operatorSlots(
      region,
      { arm: { ...arm, storage }, proxy, backup, metering },
      opts,
    );
    started.push(...operators);
    const { agents, simulators } = await managementSlots(region, proxy, opts);
    started.push(...agents, ...simulators);
    await Promise.all(started.map((s) => s.ready()));
    const armRef = arm;
    const meteringRef = metering;
    return {
      region,
      arm,
      proxy,
      service,
      management,
      operators,
      agents,
      simulators,
      backup,
      metering,
      logDir: opts.logDir,
      snapshot: async (signal) => ({
        ...(await snapshot(service, management, armRef, signal)),
        metering: await meteringRef.world(),
      }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function listAll<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  signal?: AbortSignal,
): Promise<T[]> {
  return (await client.listAll<T>(type, { signal })).items;
}

async function snapshot(
  service: KubeClient,
  management: KubeClient[],
  arm: ArmEmulator,
  signal?: AbortSignal,
): Promise<Snapshot> {
  const [clusters, pools, works, managementClusters] = await Promise.all([
    listAll<HcpCluster>(service, HcpClusterResource, signal),
    listAll<NodePool>(service, NodePoolResource, signal),
    listAll<ManifestWork>(service, ManifestWorkResource, signal),
    listAll<ManagementCluster>(service, ManagementClusterResource, signal),
  ]);
  const mgmt = await Promise.all(
    management.map(async (m) => {
      const [namespaces, hostedClusters, nodePools, applied] = await Promise.all([
        listAll(m, NamespaceResource, signal),
        listAll(m, HostedClusterResource, signal),
        listAll(m, HyperShiftNodePoolResource, signal),
        listAll<AppliedManifestWork>(m, AppliedManifestWorkResource, signal),
      ]);
      return { name: m.cluster, namespaces, hostedClusters, nodePools, applied };
    }),
  );
  const rollouts = await rolloutWorld(service, signal);
  return {
    clusters,
    managementClusters,
    pools,
    works,
    management: mgmt,
    azure: arm.resources(),
    azureOrphanOwners: await azureOrphanOwners(service, signal),
    ...(rollouts ? { rollouts } : {}),
  };
}

/** The owners whose Azure resources the orphan sweep's report lists (operators/orphansweep/report.ts). */
async function azureOrphanOwners(service: KubeClient, signal?: AbortSignal): Promise<string[]> {
  const report = await service.find<KubeObject & { data?: Record<string, string> }>(
    ConfigMapResource,
    ORPHAN_REPORT_NAME,
    OPERATORS_NAMESPACE,
    { signal },
  );
  return [...(report?.data?.["orphans"] ?? "").matchAll(/\buid=(\S+)/g)].map((m) => m[1] ?? "");
}

/** The rollouts, their tasks and runs, and the keyrings they may have rotated; none when no rollout exists. */
async function rolloutWorld(service: KubeClient, signal?: AbortSignal): Promise<RolloutWorld | undefined> {
  const rollouts = await listAll<Rollout>(service, RolloutResource, signal);
  if (rollouts.length === 0) return undefined;
  const [tasks, runs, secrets] = await Promise.all([
    listAll<MaintenanceTask>(service, MaintenanceTaskResource, signal),
    listAll<MaintenanceRun>(service, MaintenanceRunResource, signal),
    service.listAll<KubeObject & { data?: Record<string, string> }>(SecretResource, {
      namespace: OPERATORS_NAMESPACE,
      labelSelector: SIGNING_KEY_LABEL,
      signal,
    }),
  ]);
  const keyrings = new Map<string, StoredKeyring>();
  for (const secret of secrets.items) {
    const uid = secret.metadata.labels?.[SIGNING_KEY_LABEL];
    const ring = keyringFromSecretData(secret.data);
    if (!uid || !ring) continue;
    keyrings.set(uid, {
      activeKeyId: keyId(ring.active),
      next: ring.next !== undefined,
      retiredKeyIds: ring.retired.map((r) => r.kid),
    });
  }
  return { rollouts, tasks, runs, keyrings };
}
