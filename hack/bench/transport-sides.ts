/**
 * The two ends of the transport, ours and the real Maestro's, each as separate processes beside a
 * region (its apiservers and mosquitto):
 *  - a server side submits one bundle per call and reports when its status comes back applied at
 *    the submitted generation: ours through ManifestWorks in the service cluster (operators/main.ts
 *    with --broker-url runs maestro-server alone), the real one through gRPC Publish and its
 *    Subscribe stream of statuses;
 *  - an agent side per consumer: operators/maestro-agent/main.ts, or `maestro agent`.
 */
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brokerFlags } from "../harness/broker.ts";
import { freePort, waitFor } from "../harness/ports.ts";
import { startProcess, type ManagedProcess } from "../harness/process.ts";
import type { Region } from "../harness/region.ts";
import { bundleEvent } from "../harness/maestro/grpc.ts";
import {
  GRPC_SOURCE,
  startMaestroAgent,
  startMaestroServer,
  type MaestroMqttConfig,
} from "../harness/maestro/index.ts";
import { ManifestWorkResource, type Manifest, type ManifestWork } from "../../operators/api/work/v1.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { shippedEnv } from "./components.ts";
import { MaestroGrpcClient, type ReceivedCloudEvent } from "./maestro-grpc.ts";

export type Implementation = "ours" | "real";

/** A process whose CPU time and peak RSS the bench reports. */
export interface Component {
  name: string;
  pid: number;
}

export interface ServerSide {
  components: Component[];
  /** A fresh key for bundle `i` of `consumer`; the caller records its send time under it. */
  keyFor(consumer: string, i: number): string;
  /** Creates the bundle: one ConfigMap `bench-<i>` in `namespace` of the consumer's cluster. */
  submit(key: string, consumer: string, i: number, namespace: string): Promise<void>;
  /** Called with a key each time its status shows it applied at the submitted generation. */
  onApplied(handler: (key: string) => void): void;
  stop(): Promise<void>;
}

export interface AgentSide {
  components: Component[];
  stop(): Promise<void>;
}

export interface SideOptions {
  region: Region;
  consumers: string[];
  /** Run our node processes with --cpu-prof into this directory. */
  cpuProfileDir?: string;
  /** Where our processes' logs are copied when they stop (the region's work dir is removed). */
  logDir: string;
}

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const namespaceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await client.create(namespaceType, { metadata: { name } }).catch((err: unknown) => {
    if (!String(err).includes("AlreadyExists") && !String(err).includes("409")) throw err;
  });
}

/** Bundle `i`: one ConfigMap `bench-<i>` in `namespace`. */
export function configMap(i: number, namespace: string): Manifest {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `bench-${i}`, namespace },
    data: { i: String(i) },
  };
}

function brokerOf(region: Region) {
  if (!region.broker) throw new Error("the region has no broker");
  return region.broker;
}

async function mqttConfig(region: Region, identity: string): Promise<MaestroMqttConfig> {
  const broker = brokerOf(region);
  const c = await broker.credentials(identity);
  return {
    brokerHost: `${broker.host}:${broker.port}`,
    caPath: c.caPath,
    certPath: c.certPath,
    keyPath: c.keyPath,
  };
}

function kubeconfigOf(region: Region, name: string): string {
  const cluster = region.clusters.find((c) => c.name === name);
  if (!cluster) throw new Error(`the region has no cluster ${name}`);
  return cluster.kubeconfigPath;
}

/**
 * Starts one of our entry points as a node process and waits for its /readyz; stopping it keeps
 * its log and its metrics in `opts.logDir`. With `component`, the process gets the environment its
 * Deployment gives it (NODE_OPTIONS, MALLOC_ARENA_MAX), so that its memory is the shipped one's.
 */
export async function startOurProcess(
  name: string,
  script: string,
  args: string[],
  opts: Pick<SideOptions, "region" | "cpuProfileDir" | "logDir"> & { component?: "agent" | "operators" },
): Promise<ManagedProcess> {
  const port = await freePort();
  if (opts.cpuProfileDir) await mkdir(opts.cpuProfileDir, { recursive: true });
  const profile = opts.cpuProfileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${opts.cpuProfileDir}`, `--cpu-prof-name=${name}.cpuprofile`]
    : [];
  const proc = await startProcess({
    name,
    command: process.execPath,
    args: [...profile, join(repoRoot, script), ...args, `--http-address=127.0.0.1:${port}`],
    dir: opts.region.workDir,
    // Errors only unless asked for more: a log line per event would be charged to our figures.
    env: {
      ...process.env,
      ...(opts.component && shippedEnv(opts.component)),
      HCP_LOG_LEVEL: process.env.HCP_LOG_LEVEL ?? "error",
    },
  });
  const stop = (timeoutMs?: number): Promise<void> => proc.stop(timeoutMs);
  const stopAndKeepLog = async (timeoutMs?: number): Promise<void> => {
    // Its metrics too (workqueue waits, reconcile and apiserver request durations): where time went.
    await mkdir(opts.logDir, { recursive: true });
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) })
      .then((r) => r.text())
      .catch((err: unknown) => `# not scraped: ${String(err)}\n`);
    await writeFile(join(opts.logDir, `${name}.metrics`), metrics);
    await stop(timeoutMs);
    await copyFile(proc.logPath, join(opts.logDir, `${name}.log`));
  };
  try {
    await waitFor(
      `${name} ready`,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })).ok,
      { timeoutMs: 60_000, exited: proc.exited },
    );
  } catch (err) {
    const log = await readFile(proc.logPath, "utf8").catch(() => "");
    await stopAndKeepLog();
    throw new Error(`${String(err)}\n${log.slice(-2_000)}`, { cause: err });
  }
  return { ...proc, stop: stopAndKeepLog };
}

/** Our maestro-server (operators/main.ts) and a ManifestWork informer of the bench's own. */
export async function startOurServer(opts: SideOptions): Promise<ServerSide> {
  const registry = new ClusterRegistry();
  const service = registry.add("service", { path: kubeconfigOf(opts.region, "service") });
  for (const consumer of opts.consumers) await ensureNamespace(service.client, consumer);
  const mqtt = await mqttConfig(opts.region, "maestro");
  const proc = await startOurProcess(
    "hcp-maestro-server",
    "operators/main.ts",
    [`--kubeconfig=${kubeconfigOf(opts.region, "service")}`, ...brokerFlags(brokerOf(opts.region).url, mqtt)],
    { ...opts, component: "operators" },
  );
  const handlers: Array<(key: string) => void> = [];
  const informer = service.informer<ManifestWork>(ManifestWorkResource);
  const check = (w: ManifestWork): void => {
    const applied = w.status?.conditions?.find((c) => c.type === "Applied");
    if (applied?.status !== "True" || applied.observedGeneration !== w.metadata.generation) return;
    for (const h of handlers) h(`${w.metadata.namespace}/${w.metadata.name}`);
  };
  informer.addEventHandler({ onAdd: check, onUpdate: (_old, w) => check(w) });
  await informer.waitForSync();
  return {
    components: [{ name: "server", pid: proc.pid }],
    keyFor: (consumer, i) => `${consumer}/bench-${i}`,
    async submit(_key, consumer, i, namespace) {
      await service.client.create<ManifestWork>(ManifestWorkResource, {
        apiVersion: "work.open-cluster-management.io/v1",
        kind: "ManifestWork",
        metadata: { name: `bench-${i}`, namespace: consumer },
        spec: { workload: { manifests: [configMap(i, namespace)] } },
      });
    },
    onApplied: (h) => handlers.push(h),
    async stop() {
      registry.stopAll();
      await proc.stop();
    },
  };
}

interface BundleStatusData {
  conditions?: Array<{ type: string; status: string }>;
}

/** Applied=True at version 1 (bundles are only created here, never updated). */
function appliedBundle(event: ReceivedCloudEvent): string | undefined {
  const id = event.attributes.get("ce-resourceid");
  if (typeof id !== "string" || event.data === undefined) return undefined;
  const version = event.attributes.get("ce-resourceversion");
  if (version !== undefined && Number(version) !== 1) return undefined;
  const status = JSON.parse(event.data) as BundleStatusData;
  const applied = status.conditions?.find((c) => c.type === "Applied");
  return applied?.status === "True" ? id : undefined;
}

/** The real `maestro server` (its own PostgreSQL database), driven over gRPC as its source clients do. */
export async function startRealServer(opts: SideOptions): Promise<ServerSide> {
  const server = await startMaestroServer({
    workDir: opts.region.workDir,
    mqtt: await mqttConfig(opts.region, "maestro"),
  });
  const grpc = new MaestroGrpcClient(server.grpcAddress);
  try {
    await Promise.all(opts.consumers.map((c) => server.createConsumer(c)));
    const handlers: Array<(key: string) => void> = [];
    const unsubscribe = await grpc.subscribe({ source: GRPC_SOURCE }, (event) => {
      const id = appliedBundle(event);
      if (id) for (const h of handlers) h(id);
    });
    return {
      components: [{ name: "server", pid: server.process.pid }],
      keyFor: () => randomUUID(),
      submit: (key, consumer, i, namespace) =>
        grpc.publish(
          bundleEvent("create_request", key, { consumer, manifests: [configMap(i, namespace)] }, 1),
        ),
      onApplied: (h) => handlers.push(h),
      async stop() {
        unsubscribe();
        grpc.close();
        await server.stop();
      },
    };
  } catch (err) {
    grpc.close();
    await server.stop();
    throw err;
  }
}

async function startOurAgent(opts: SideOptions, consumer: string): Promise<ManagedProcess> {
  const mqtt = await mqttConfig(opts.region, consumer);
  return startOurProcess(
    `hcp-maestro-agent-${consumer}`,
    "operators/maestro-agent/main.ts",
    [
      `--consumer=${consumer}`,
      `--kubeconfig=${kubeconfigOf(opts.region, consumer)}`,
      ...brokerFlags(brokerOf(opts.region).url, mqtt),
    ],
    { ...opts, component: "agent" },
  );
}

/** One agent per consumer, all of one implementation. */
export async function startAgents(impl: Implementation, opts: SideOptions): Promise<AgentSide> {
  const stops: Array<() => Promise<void>> = [];
  const components: Component[] = [];
  try {
    for (const consumer of opts.consumers) {
      if (impl === "ours") {
        const proc = await startOurAgent(opts, consumer);
        stops.push(() => proc.stop());
        components.push({ name: `agent ${consumer}`, pid: proc.pid });
      } else {
        const agent = await startMaestroAgent({
          workDir: opts.region.workDir,
          consumer,
          kubeconfigPath: kubeconfigOf(opts.region, consumer),
          mqtt: await mqttConfig(opts.region, consumer),
          // OCM's default; ours is 10 s too. Applied is reported on apply, not on this tick.
          statusSyncInterval: "10s",
        });
        stops.push(() => agent.stop());
        components.push({ name: `agent ${consumer}`, pid: agent.process.pid });
      }
    }
  } catch (err) {
    await Promise.all(stops.map((s) => s()));
    throw err;
  }
  return { components, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
}

export function startServer(impl: Implementation, opts: SideOptions): Promise<ServerSide> {
  return impl === "ours" ? startOurServer(opts) : startRealServer(opts);
}
