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
 *   --leader-elect               elect the replica that runs the operation notifier (lease
 *                                hcp-frontend in --namespace); without it every replica runs one
 *   --namespace <ns>             the lease's namespace (default hcp-system)
 *   --operation-deadlines <list> bounds other than DEFAULT_DEADLINES, e.g. clusterCreate=30m,upgrade=90m
 *                                (m or s; names as OperationDeadlines)
 *   --notification-hosts <list>  hosts an Azure-AsyncNotificationUri may name (default ARM's)
 *   --notification-ca <path>     a CA trusted for notification endpoints besides the system's
 *   --azure-endpoint <url>       ARM endpoint where a create's customer resources are checked
 *                                (default https://management.azure.com)
 *   --azure-authority-host <url> Entra ID authority (default: the SDK's)
 *   --azure-ca <path>            extra CA to trust for ARM and token calls (the emulator's)
 */
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { createAzureClients } from "../azure/clients.ts";
import { KubeClient } from "../runtime/kube.ts";
import { loadClusterAccess } from "../runtime/kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import { Manager, signalHandler } from "../runtime/manager.ts";
import { DEFAULT_DEADLINES, type OperationDeadlines } from "./operations/deadlines.ts";
import { DEFAULT_NOTIFICATION_HOSTS } from "./operations/notification-uri.ts";
import { OperationNotifier } from "./operations/notifier.ts";
import { DEFAULT_CONNECTION_LIMITS, Frontend } from "./http/server.ts";

function hostPort(address: string, flag: string): { host: string; port: number } {
  const i = address.lastIndexOf(":");
  const port = Number(address.slice(i + 1));
  if (i < 0 || !Number.isInteger(port)) throw new Error(`${flag} expects host:port, got "${address}"`);
  return { host: address.slice(0, i), port };
}

/** `clusterCreate=30m,upgrade=90m` as milliseconds per bound; a name or a duration not understood throws. */
function parseDeadlines(list: string): Partial<OperationDeadlines> {
  const out: Partial<OperationDeadlines> = {};
  for (const item of list.split(",").filter((i) => i.trim() !== "")) {
    const m = /^\s*(\w+)=(\d+)([ms])\s*$/.exec(item);
    const name = m?.[1];
    if (!m || !name || !(name in DEFAULT_DEADLINES))
      throw new Error(`--operation-deadlines expects name=<n>m or name=<n>s, got "${item}"`);
    out[name as keyof OperationDeadlines] = Number(m[2]) * (m[3] === "m" ? 60_000 : 1000);
  }
  return out;
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
      "leader-elect": { type: "boolean", default: false },
      namespace: { type: "string", default: "hcp-system" },
      "operation-deadlines": { type: "string", default: "" },
      "notification-hosts": { type: "string", default: DEFAULT_NOTIFICATION_HOSTS.join(",") },
      "notification-ca": { type: "string" },
      "azure-endpoint": { type: "string" },
      "azure-authority-host": { type: "string" },
      "azure-ca": { type: "string" },
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
  const client = new KubeClient("service", access);
  const notificationHosts = values["notification-hosts"].split(",").filter((h) => h.trim() !== "");
  const notificationCA = values["notification-ca"];
  // A request waits on Azure: few retries, short timeouts, and a long Retry-After is ARM's to wait.
  const azure = await createAzureClients({
    armEndpoint: values["azure-endpoint"],
    authorityHost: values["azure-authority-host"],
    caFile: values["azure-ca"],
    retry: { maxRetries: 2, maxRetryAfterMs: 2_000 },
    requestTimeoutMs: 10_000,
  });
  const frontend = new Frontend({
    client,
    tls: { cert: await readFile(cert), key: await readFile(key), clientCA: await readFile(clientCA) },
    host,
    port,
    catalogNamespace: values["catalog-namespace"],
    connections: { maxConnections },
    deadlines: parseDeadlines(values["operation-deadlines"]),
    notificationHosts,
    azure,
    log,
  });
  const manager = new Manager({
    httpAddress: values["http-address"],
    log,
    leaderElection: values["leader-elect"]
      ? {
          client,
          namespace: values.namespace,
          name: "hcp-frontend",
          identity: `${hostname()}-${process.pid}`,
        }
      : undefined,
  });
  manager.add(frontend);
  manager.add(
    new OperationNotifier({
      client,
      allowedHosts: notificationHosts,
      ...(notificationCA ? { ca: await readFile(notificationCA) } : {}),
      log,
    }),
  );
  await manager.start(signalHandler(log));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `hcp-frontend failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
