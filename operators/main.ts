/**
 * The operators process: one Manager (probes, metrics, leader election, graceful shutdown) and
 * the clusters it talks to. Controllers register here as they are added to the project.
 *
 *   --kubeconfig <path>            service cluster (default: in-cluster / $KUBECONFIG)
 *   --management <name>=<path>     a management cluster kubeconfig (repeatable)
 *   --http-address <host:port>     probes and metrics (default 0.0.0.0:8080)
 *   --leader-elect                 run controllers only while holding the lease
 *   --namespace <ns>               where the lease lives (default hcp-system)
 *   --broker-url <mqtts://h:p>     run maestro-server against this MQTT 5 broker, with
 *   --broker-ca/-cert/-key <path>  its CA and this server's client certificate (CN "maestro")
 */
import { KubeConfig } from "@kubernetes/client-node";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { ClusterRegistry } from "./runtime/clusters.ts";
import { createLogger } from "./runtime/logger.ts";
import { Manager, signalHandler } from "./runtime/manager.ts";
import { MaestroServer } from "./maestro-server/controller.ts";

const SERVICE_CLUSTER = "service";

function serviceKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      management: { type: "string", multiple: true, default: [] },
      "http-address": { type: "string", default: "0.0.0.0:8080" },
      "leader-elect": { type: "boolean", default: false },
      namespace: { type: "string", default: "hcp-system" },
      "broker-url": { type: "string" },
      "broker-ca": { type: "string", default: "" },
      "broker-cert": { type: "string", default: "" },
      "broker-key": { type: "string", default: "" },
    },
  });
  const log = createLogger({ component: "hcp-operators" });
  const clusters = new ClusterRegistry(log);
  const service = clusters.add(SERVICE_CLUSTER, serviceKubeConfig(values.kubeconfig));
  for (const spec of values.management) {
    const [name, path] = spec.split("=");
    if (!name || !path) throw new Error(`--management expects name=/path/to/kubeconfig, got "${spec}"`);
    clusters.add(name, { path });
  }
  const manager = new Manager({
    httpAddress: values["http-address"],
    log,
    leaderElection: values["leader-elect"]
      ? {
          client: service.client,
          namespace: values.namespace,
          name: "hcp-operators",
          identity: `${hostname()}-${process.pid}`,
        }
      : undefined,
  });
  manager.addReadyCheck("informers-synced", () => clusters.hasSynced());
  if (values["broker-url"]) {
    const server = new MaestroServer({
      cluster: service,
      log,
      broker: {
        url: values["broker-url"],
        caFile: values["broker-ca"],
        certFile: values["broker-cert"],
        keyFile: values["broker-key"],
        clientId: `maestro-${hostname()}`,
      },
    });
    manager.add(server);
    // A follower holds no broker connection; readiness must not depend on leadership.
    manager.addReadyCheck("broker", () => !manager.isLeader() || server.connection.isConnected());
  }
  await manager.start(signalHandler(log));
  clusters.stopAll();
}

main().catch((err: unknown) => {
  process.stderr.write(`hcp-operators: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
