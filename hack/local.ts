/**
 * `npm run local`: brings up a local region (etcd, a kube-apiserver for the service cluster and
 * for each management cluster, every CRD installed, an MQTT broker with client certificates for
 * maestro and each management cluster), prints how to reach it, and tears it all down on Ctrl-C
 * or SIGTERM.
 *
 *   HCP_MANAGEMENT_CLUSTERS=2   how many management clusters
 *   HCP_KUBECONFIGS=service=…,mgmt-1=…   use existing clusters instead of starting any
 */
import { copyFile, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { SOURCE_IDENTITY, type Broker } from "./harness/broker.ts";
import { startRegion, type RegionCluster } from "./harness/region.ts";

const stateDir = resolve(process.env.HCP_LOCAL_DIR ?? ".local");

/** Issues the certificates the source and the management clusters' agents connect with. */
async function brokerLines(broker: Broker, clusters: RegionCluster[]): Promise<string[]> {
  const identities = [SOURCE_IDENTITY, ...clusters.filter((c) => c.role === "management").map((c) => c.name)];
  const issued = await Promise.all(
    identities.map(async (identity) => ({ identity, ...(await broker.credentials(identity)) })),
  );
  return [
    `  broker   ${broker.url}   CA ${broker.caPath}`,
    "  client certificates (CN = MQTT username):",
    ...issued.map((c) => `    ${c.identity.padEnd(10)} ${c.certPath} ${c.keyPath}`),
    `  broker log: ${broker.logPath}`,
  ];
}

async function main(): Promise<void> {
  process.stderr.write("Starting the local region (the first run builds kube-apiserver and etcd)…\n");
  const region = await startRegion({ managementClusters: Number(process.env.HCP_MANAGEMENT_CLUSTERS ?? 2) });
  await mkdir(stateDir, { recursive: true });
  const lines = [`Local region ready in ${(region.startupMs / 1000).toFixed(1)} s.`, ""];
  for (const c of region.clusters) {
    // A stable copy of each kubeconfig, so `kubectl --kubeconfig .local/service.kubeconfig` keeps working.
    // Only for clusters started here: with HCP_KUBECONFIGS the work dir holds just the broker.
    const stable = join(stateDir, `${c.name}.kubeconfig`);
    if (c.apiServer) await copyFile(c.kubeconfigPath, stable);
    lines.push(`  ${c.name.padEnd(8)} ${c.url.padEnd(26)} ${c.apiServer ? stable : c.kubeconfigPath}`);
  }
  if (region.broker) lines.push("", ...(await brokerLines(region.broker, region.clusters)));
  const kubectl = region.assetsDir ? join(region.assetsDir, "kubectl") : "kubectl";
  lines.push("", "Try:", `  ${kubectl} --kubeconfig ${join(stateDir, "service.kubeconfig")} get hcp -A`, "");
  if (region.workDir) lines.push(`Processes and logs: work dir: ${region.workDir}`);
  lines.push("Press Ctrl-C to stop and remove everything.");
  process.stdout.write(lines.join("\n") + "\n");

  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  process.stderr.write("Stopping the local region…\n");
  await region.stop();
}

main().catch((err: unknown) => {
  process.stderr.write(`local region failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
