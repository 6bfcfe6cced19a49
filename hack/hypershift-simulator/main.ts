/**
 * The hypershift-simulator process, one per management cluster: stands in for the HyperShift
 * operator (HostedCluster and NodePool status, finalizers, control-plane namespaces). Probes and
 * metrics as the operators process.
 *
 *   --kubeconfig <path>            the management cluster (default: in-cluster / $KUBECONFIG)
 *   --cluster <name>               its name in logs and metrics, [a-z0-9-]+ (default "management")
 *   --provision-delay-ms <ms>      how long a rollout or a scale takes (default 2000)
 *   --delete-delay-ms <ms>         how long a deletion holds the finalizer (default 1000)
 *   --http-address <host:port>     probes and metrics (default 0.0.0.0:8080)
 */
import { parseArgs } from "node:util";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { loadClusterAccess } from "../../operators/runtime/kubeconfig.ts";
import { createLogger } from "../../operators/runtime/logger.ts";
import { Manager, signalHandler } from "../../operators/runtime/manager.ts";
import { HyperShiftSimulator } from "./controller.ts";

function milliseconds(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`--${flag} must be a number of milliseconds ≥ 0`);
  return ms;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      cluster: { type: "string", default: "management" },
      "provision-delay-ms": { type: "string" },
      "delete-delay-ms": { type: "string" },
      "http-address": { type: "string", default: "0.0.0.0:8080" },
    },
  });
  const log = createLogger({ component: "hypershift-simulator" });
  const clusters = new ClusterRegistry(log);
  const cluster = clusters.add(
    values.cluster,
    loadClusterAccess(values.kubeconfig ? { path: values.kubeconfig } : { default: true }),
  );
  const simulator = new HyperShiftSimulator({
    cluster,
    provisionDelayMs: milliseconds("provision-delay-ms", values["provision-delay-ms"]),
    deleteDelayMs: milliseconds("delete-delay-ms", values["delete-delay-ms"]),
    log,
  });
  const manager = new Manager({ httpAddress: values["http-address"], log });
  manager.add(simulator);
  manager.addReadyCheck("informers", () => simulator.hasSynced());
  try {
    await manager.start(signalHandler(log));
  } finally {
    clusters.stopAll();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `hypershift-simulator: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
