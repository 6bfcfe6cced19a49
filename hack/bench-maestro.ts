/**
 * ManifestWork create → status-back latency through the whole transport: maestro-server, two
 * maestro-agents and the region's mosquitto (TLS, ACLs), in one process against the real
 * apiservers. A work counts as back when its status shows Applied=True for generation 1.
 */
import { ManifestWorkResource, type ManifestWork } from "../operators/api/work/v1.ts";
import { MaestroAgent } from "../operators/maestro-agent/controller.ts";
import { MaestroServer } from "../operators/maestro-server/controller.ts";
import { ClusterRegistry } from "../operators/runtime/clusters.ts";
import type { KubeClient } from "../operators/runtime/kube.ts";
import type { Region } from "./harness/region.ts";

export interface LatencyResult {
  /** Milliseconds from create to status back, one per work, ascending. */
  latenciesMs: number[];
  totalMs: number;
}

const namespaceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

function work(consumer: string, i: number, target: string): ManifestWork {
  return {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: { name: `bench-${i}`, namespace: consumer },
    spec: {
      workload: {
        manifests: [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: `bench-${i}`, namespace: target },
            data: { i: String(i) },
          },
        ],
      },
    },
  };
}

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await client.create(namespaceType, { metadata: { name } }).catch(() => undefined);
}

/** Creates `count` works spread over the management clusters, `concurrency` at a time. */
export async function benchManifestWorkLatency(
  region: Region,
  count: number,
  concurrency = 20,
): Promise<LatencyResult> {
  const broker = region.broker;
  if (!broker) throw new Error("the region has no broker");
  const registry = new ClusterRegistry();
  const service = registry.add("service", {
    path: region.clusters.find((c) => c.role === "service")!.kubeconfigPath,
  });
  const consumers = region.clusters.filter((c) => c.role === "management");
  const stop = new AbortController();
  const creds = async (id: string) => {
    const c = await broker.credentials(id);
    return { caFile: c.caPath, certFile: c.certPath, keyFile: c.keyPath };
  };
  const server = new MaestroServer({
    cluster: service,
    broker: { url: broker.url, clientId: "maestro-bench", ...(await creds("maestro")) },
  });
  const runs = [server.start(stop.signal)];
  for (const c of consumers) {
    const mgmt = registry.add(c.name, { path: c.kubeconfigPath });
    await ensureNamespace(service.client, c.name);
    await ensureNamespace(mgmt.client, "bench");
    const agent = new MaestroAgent({
      consumer: c.name,
      kube: mgmt.client,
      broker: { url: broker.url, ...(await creds(c.name)) },
    });
    runs.push(agent.start(stop.signal));
  }
  const informer = service.informer<ManifestWork>(ManifestWorkResource);
  await informer.waitForSync();
  const created = new Map<string, number>();
  const latencies: number[] = [];
  let resolveAll: () => void = () => undefined;
  const allBack = new Promise<void>((r) => (resolveAll = r));
  const check = (w: ManifestWork): void => {
    const key = `${w.metadata.namespace}/${w.metadata.name}`;
    const t0 = created.get(key);
    const applied = w.status?.conditions?.find((c) => c.type === "Applied");
    if (t0 === undefined || applied?.status !== "True") return;
    latencies.push(performance.now() - t0);
    created.delete(key);
    if (latencies.length === count) resolveAll();
  };
  informer.addEventHandler({ onAdd: check, onUpdate: (_o, n) => check(n) });
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const consumer = consumers[i % consumers.length]!.name;
      created.set(`${consumer}/bench-${i}`, performance.now());
      await service.client.create(ManifestWorkResource, work(consumer, i, "bench"));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  await allBack;
  const totalMs = performance.now() - started;
  stop.abort();
  await Promise.allSettled(runs);
  registry.stopAll();
  latencies.sort((a, b) => a - b);
  return { latenciesMs: latencies, totalMs };
}
