/**
 * The ARM frontend process: the HTTPS server ARM calls (mutual TLS) and, on a plain port of its
 * own, the Manager's probes and metrics for the kubelet and Prometheus.
 *
 *   --kubeconfig <path>          service cluster (default: in-cluster / $KUBECONFIG)
 *   --listen <host:port>         ARM-facing HTTPS address (default 0.0.0.0:8443)
 *   --tls-cert / --tls-key       serving certificate and key (PEM)
 *   --client-ca <path>           CA of ARM's client certificates; other callers get 401
 *   --catalog-namespace <ns>     where the release catalog ConfigMap lives (default hcp-system)
 *   --http-address <host:port>   probes and metrics without client certificates (default 0.0.0.0:8081)
 *   --max-connections <n>        open ARM connections at most (default 2000); the handshake, header,
 *                                request and idle timeouts are DEFAULT_CONNECTION_LIMITS
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { KubeClient } from "../runtime/kube.ts";
import { loadClusterAccess } from "../runtime/kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import { Manager, signalHandler } from "../runtime/manager.ts";
import { DEFAULT_CONNECTION_LIMITS, Frontend } from "./server.ts";

function hostPort(address: string, flag: string): { host: string; port: number } {
  const i = address.lastIndexOf(":");
  const port = Number(address.slice(i + 1));
  if (i < 0 || !Number.isInteger(port)) throw new Error(`${flag} expects host:port, got "${address}"`);
  return { host: address.slice(0, i), port };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      listen: { type: "string", default: "0.0.0.0:8443" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "client-ca": { type: "string" },
      "catalog-namespace": { type: "string", default: "hcp-system" },
      "http-address": { type: "string", default: "0.0.0.0:8081" },
      "max-connections": { type: "string", default: String(DEFAULT_CONNECTION_LIMITS.maxConnections) },
    },
  });
  const cert = values["tls-cert"];
  const key = values["tls-key"];
  const clientCA = values["client-ca"];
  if (!cert || !key || !clientCA) throw new Error("--tls-cert, --tls-key and --client-ca are required");
  const log = createLogger({ component: "hcp-frontend" });
  const access = loadClusterAccess(values.kubeconfig ? { path: values.kubeconfig } : { default: true });
  const { host, port } = hostPort(values.listen, "--listen");
  const maxConnections = Number(values["max-connections"]);
  if (!Number.isInteger(maxConnections) || maxConnections < 1)
    throw new Error(`--max-connections expects a positive integer, got "${values["max-connections"]}"`);
  const frontend = new Frontend({
    client: new KubeClient("service", access),
    tls: { cert: await readFile(cert), key: await readFile(key), clientCA: await readFile(clientCA) },
    host,
    port,
    catalogNamespace: values["catalog-namespace"],
    connections: { maxConnections },
    log,
  });
  const manager = new Manager({ httpAddress: values["http-address"], log });
  manager.add(frontend);
  await manager.start(signalHandler(log));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `hcp-frontend failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
