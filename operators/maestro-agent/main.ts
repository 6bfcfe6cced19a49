/**
 * The maestro-agent process, one per management cluster: applies the works of its consumer and
 * reports their status. Probes and metrics as the operators process.
 *
 *   --consumer <name>              the consumer (management cluster) name, [a-z0-9-]+
 *   --kubeconfig <path>            the management cluster (default: in-cluster / $KUBECONFIG)
 *   --broker-url <mqtts://h:p>     the MQTT 5 broker
 *   --broker-ca/-cert/-key <path>  its CA and this agent's client certificate (CN = consumer)
 *   --broker-credentials-secret <namespace>/<name>
 *                                  the Secret on the management cluster holding ca.crt, tls.crt and
 *                                  tls.key: read first at start, and where the agent keeps the
 *                                  certificate it renews before expiry (default: none, files only)
 *   --allowed-kinds <list>         comma-separated Kind, Kind.group, *.group (default: see apply.ts)
 *   --status-sync-ms <ms>          how often objects no watch covers are read for status (default 60000;
 *                                  HostedClusters and NodePools report through watches)
 *   --heartbeat-ms <ms>            how often to tell maestro-server the agent is alive (default 10000;
 *                                  0: never, as a real Maestro agent)
 *   --http-address <host:port>     probes and metrics (default 0.0.0.0:8080)
 */
import { parseArgs } from "node:util";
import { KubeClient } from "../runtime/kube.ts";
import { loadClusterAccess } from "../runtime/kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import { Manager, signalHandler } from "../runtime/manager.ts";
import { MaestroAgent } from "./controller.ts";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      consumer: { type: "string" },
      kubeconfig: { type: "string" },
      "broker-url": { type: "string" },
      "broker-ca": { type: "string", default: "" },
      "broker-cert": { type: "string", default: "" },
      "broker-key": { type: "string", default: "" },
      "broker-credentials-secret": { type: "string" },
      "allowed-kinds": { type: "string" },
      "status-sync-ms": { type: "string" },
      "heartbeat-ms": { type: "string" },
      "http-address": { type: "string", default: "0.0.0.0:8080" },
    },
  });
  if (!values.consumer || !values["broker-url"]) throw new Error("--consumer and --broker-url are required");
  const statusSyncMs = values["status-sync-ms"] === undefined ? undefined : Number(values["status-sync-ms"]);
  if (statusSyncMs !== undefined && !(statusSyncMs > 0))
    throw new Error("--status-sync-ms must be a positive number");
  const heartbeatMs = values["heartbeat-ms"] === undefined ? undefined : Number(values["heartbeat-ms"]);
  if (heartbeatMs !== undefined && !(heartbeatMs >= 0 && heartbeatMs <= 3_600_000))
    throw new Error("--heartbeat-ms must be a number of milliseconds from 0 to 3600000");
  const access = loadClusterAccess(values.kubeconfig ? { path: values.kubeconfig } : { default: true });
  const log = createLogger({ component: "maestro-agent" });
  const agent = new MaestroAgent({
    consumer: values.consumer,
    kube: new KubeClient(values.consumer, access),
    log,
    allowedKinds: values["allowed-kinds"]
      ?.split(",")
      .map((k) => k.trim())
      .filter(Boolean),
    statusSyncMs,
    heartbeatMs,
    credentialsSecret: values["broker-credentials-secret"],
    broker: {
      url: values["broker-url"],
      caFile: values["broker-ca"],
      certFile: values["broker-cert"],
      keyFile: values["broker-key"],
    },
  });
  const manager = new Manager({ httpAddress: values["http-address"], log });
  manager.add(agent);
  manager.addReadyCheck("broker", () => agent.connection.isConnected());
  await manager.start(signalHandler(log));
}

main().catch((err: unknown) => {
  process.stderr.write(`maestro-agent: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
