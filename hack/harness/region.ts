/**
 * The local region: one etcd, and one kube-apiserver and one kube-controller-manager (namespace
 * deletion, garbage collection) per cluster (the service cluster and N management clusters), CRDs
 * installed, a kubeconfig per cluster. Used by the vitest global setup
 * and by `npm run local`. With HCP_KUBECONFIGS set ("service=/path,mgmt-1=/path,…") it uses
 * those clusters instead (kind, AKS, …) and starts nothing.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startApiServer, type ApiServer } from "./apiserver.ts";
import { controllerManagerBinary, ensureKubeAssets } from "./assets.ts";
import { startBroker, type Broker } from "./broker.ts";
import { startControllerManager, type ControllerManager } from "./controllermanager.ts";
import { crdFilesIn, installCrds } from "./crds.ts";
import { startEtcd, type Etcd } from "./etcd.ts";
import { startPostgres, type Postgres } from "./postgres.ts";
import { isAlive } from "./process.ts";
import { NamespaceResource } from "../../operators/api/core.ts";
import { VELERO_NAMESPACE } from "../../operators/api/velero/v1/index.ts";
import { KubeClient } from "../../operators/runtime/kube.ts";
import { managementClusterCrds } from "./upstream.ts";

export const SERVICE_CLUSTER = "service";
export const repoCrdDir = fileURLToPath(new URL("../../crds/", import.meta.url));
const workDirPrefix = "hcp-region-";

export interface RegionCluster {
  name: string;
  role: "service" | "management";
  url: string;
  kubeconfigPath: string;
  /** Present when the harness runs this apiserver itself. */
  apiServer?: ApiServer;
  /** Present when the harness runs this apiserver and the assets hold kube-controller-manager. */
  controllerManager?: ControllerManager;
}

export interface Region {
  clusters: RegionCluster[];
  assetsDir: string;
  etcdUrl: string;
  /** Present when the harness runs etcd itself (chaos runs pause it). */
  etcd?: Etcd;
  workDir: string;
  /** Milliseconds from start() to a ready region with CRDs installed. */
  startupMs: number;
  /** The MQTT broker between the service and the management clusters; absent with `broker: false`. */
  broker?: Broker;
  /** The usage ledger's PostgreSQL (issue 35); present with `postgres: true`. */
  postgres?: Postgres;
  stop(): Promise<void>;
}

export interface StartRegionOptions {
  managementClusters?: number;
  /** Extra kube-apiserver flags for every cluster. */
  apiServerArgs?: string[];
  /** Start a local mosquitto (default true), also when HCP_KUBECONFIGS names existing clusters. */
  broker?: boolean;
  /** Start a private PostgreSQL from the machine's package (default false; not with HCP_KUBECONFIGS). */
  postgres?: boolean;
}

function managementNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `mgmt-${i + 1}`);
}

/** A fresh work dir owned by this process, so reapStaleRegions leaves it alone while we run. */
async function createWorkDir(): Promise<string> {
  const workDir = await mkdtemp(join(tmpdir(), workDirPrefix));
  await writeFile(join(workDir, "owner.pid"), `${process.pid}\n`);
  return workDir;
}

/** Kills processes and removes work dirs left by a harness that was killed outright. */
export async function reapStaleRegions(): Promise<void> {
  const root = tmpdir();
  for (const entry of await readdir(root)) {
    if (!entry.startsWith(workDirPrefix)) continue;
    const dir = join(root, entry);
    const owner = Number((await readFile(join(dir, "owner.pid"), "utf8").catch(() => "0")).trim());
    if (owner && isAlive(owner)) continue;
    for (const file of await readdir(dir).catch(() => [])) {
      if (!file.endsWith(".pid") || file === "owner.pid") continue;
      const pid = Number((await readFile(join(dir, file), "utf8")).trim());
      if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
    }
    await rm(dir, { recursive: true, force: true });
  }
}

function parseExternalKubeconfigs(spec: string): Array<{ name: string; path: string }> {
  return spec
    .split(",")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [name, path] = pair.split("=");
      if (!name || !path) throw new Error(`HCP_KUBECONFIGS entry "${pair}" is not name=/path/to/kubeconfig`);
      return { name, path };
    });
}

async function installRegionCrds(clusters: RegionCluster[]): Promise<void> {
  const serviceCrds = await crdFilesIn(repoCrdDir);
  const mgmtCrds = await managementClusterCrds();
  await Promise.all(
    clusters.map((c) => {
      const kc = new KubeConfig();
      kc.loadFromFile(c.kubeconfigPath);
      if (c.role === "service") return installCrds(kc, serviceCrds);
      // Velero's install owns its namespace (ARO HCP's Helm chart), not any cluster's work.
      return installCrds(kc, mgmtCrds).then(() =>
        new KubeClient("crd-install", kc).createIfAbsent(NamespaceResource, {
          metadata: { name: VELERO_NAMESPACE },
        }),
      );
    }),
  );
}

async function startExternal(spec: string, started: number, withBroker: boolean): Promise<Region> {
  const clusters: RegionCluster[] = parseExternalKubeconfigs(spec).map(({ name, path }) => {
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    return {
      name,
      role: name === SERVICE_CLUSTER ? "service" : "management",
      url: kc.getCurrentCluster()?.server ?? "",
      kubeconfigPath: path,
    };
  });
  await installRegionCrds(clusters);
  const region = { clusters, assetsDir: process.env.KUBEBUILDER_ASSETS ?? "", etcdUrl: "" };
  if (!withBroker) return { ...region, workDir: "", startupMs: Date.now() - started, stop: async () => {} };
  // The clusters are someone else's, but the broker is ours and needs a work dir to be reaped from.
  await reapStaleRegions();
  const workDir = await createWorkDir();
  const removeWorkDir = () => rm(workDir, { recursive: true, force: true });
  const broker = await startBroker({ workDir }).catch(async (err: unknown) => {
    await removeWorkDir();
    throw err;
  });
  const stop = async (): Promise<void> => {
    await broker.stop();
    await removeWorkDir();
  };
  return { ...region, workDir, startupMs: Date.now() - started, broker, stop };
}

export async function startRegion(opts: StartRegionOptions = {}): Promise<Region> {
  const started = Date.now();
  const withBroker = opts.broker ?? true;
  if (process.env.HCP_KUBECONFIGS) return startExternal(process.env.HCP_KUBECONFIGS, started, withBroker);
  await reapStaleRegions();
  const assetsDir = await ensureKubeAssets();
  const workDir = await createWorkDir();
  let etcd: Etcd | undefined;
  let broker: Broker | undefined;
  let postgres: Postgres | undefined;
  const servers: ApiServer[] = [];
  const managers: ControllerManager[] = [];
  const stop = async (): Promise<void> => {
    // Controller managers first: they would only log errors about apiservers going away.
    await Promise.all(managers.map((m) => m.stop()));
    await Promise.all([...servers.map((s) => s.stop()), broker?.stop(), postgres?.stop()]);
    await etcd?.stop();
    await rm(workDir, { recursive: true, force: true });
  };
  // The broker starts in well under a second, PostgreSQL in about one (initdb and start), beside
  // etcd and the apiservers rather than before them.
  const brokerStarting = beside(withBroker, () => startBroker({ workDir }));
  const postgresStarting = beside(opts.postgres ?? false, () => startPostgres({ workDir }));
  try {
    etcd = await startEtcd({ assetsDir, workDir });
    const names = [SERVICE_CLUSTER, ...managementNames(opts.managementClusters ?? 2)];
    const etcdUrl = etcd.url;
    const started_ = await Promise.all(
      names.map((name) =>
        startApiServer({ name, assetsDir, etcdUrl, workDir, extraArgs: opts.apiServerArgs }),
      ),
    );
    servers.push(...started_);
    const clusters: RegionCluster[] = started_.map((s) => ({
      name: s.name,
      role: s.name === SERVICE_CLUSTER ? "service" : "management",
      url: s.url,
      kubeconfigPath: s.kubeconfigPath,
      apiServer: s,
    }));
    await installRegionCrds(clusters);
    // After the CRDs: the garbage collector then knows every kind from its first discovery
    // instead of picking new ones up at its next 30 s resync.
    await startControllerManagers(clusters, { assetsDir, workDir }, managers);
    broker = await brokerStarting;
    postgres = await postgresStarting;
    const startupMs = Date.now() - started;
    return { clusters, assetsDir, etcdUrl, etcd, workDir, startupMs, broker, postgres, stop };
  } catch (err) {
    broker ??= await settled(brokerStarting);
    postgres ??= await settled(postgresStarting);
    await stop();
    throw err;
  }
}

/** Starts `start` if enabled; awaited later, so a failure meanwhile is not an unhandled rejection. */
function beside<T>(enabled: boolean, start: () => Promise<T>): Promise<T> | undefined {
  if (!enabled) return undefined;
  const starting = start();
  starting.catch(() => undefined);
  return starting;
}

/** What `starting` started, or undefined if it failed (to stop what did start after an error). */
function settled<T>(starting: Promise<T> | undefined): Promise<T | undefined> | undefined {
  return starting?.catch(() => undefined);
}

/**
 * One kube-controller-manager per cluster, each recorded in `managers` as soon as it runs (so a
 * failed start stops the others). Assets without the binary (envtest's, say) start none, with a
 * warning: namespaces then stay Terminating and ownerReferences collect nothing.
 */
async function startControllerManagers(
  clusters: RegionCluster[],
  where: { assetsDir: string; workDir: string },
  managers: ControllerManager[],
): Promise<void> {
  if (!controllerManagerBinary(where.assetsDir)) {
    process.stderr.write(
      `[region] ${where.assetsDir} has no kube-controller-manager: namespaces will not finish deleting\n`,
    );
    return;
  }
  await Promise.all(
    clusters.map(async (c) => {
      const manager = await startControllerManager({
        ...where,
        name: c.name,
        kubeconfigPath: c.kubeconfigPath,
      });
      managers.push(manager);
      c.controllerManager = manager;
    }),
  );
}
