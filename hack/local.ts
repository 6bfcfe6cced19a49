/**
 * `npm run local`: brings up a local region (etcd, a kube-apiserver and controller manager for the
 * service cluster and for each management cluster, every CRD installed, an MQTT broker with client
 * certificates, the ARM emulator), runs every controller, the maestro agents and the HyperShift
 * simulator, applies the sample cluster and prints its progress until it is Ready, then waits;
 * metering records every cluster's usage in a private PostgreSQL and reports complete hours to the
 * marketplace emulator (with the ARM emulator's tokens), as a region's operators would;
 * Ctrl-C or SIGTERM tears it all down. The CRDs (crds/), the release catalog and the RBAC are
 * the files of the bases a region deploys (config/bases/).
 *
 *   HCP_MANAGEMENT_CLUSTERS=2   how many management clusters
 *   HCP_KUBECONFIGS=service=…,mgmt-1=…   use existing clusters instead of starting any
 *   HCP_LOCAL_SAMPLE=0          do not apply the sample cluster
 *
 * SRE access (issue 36): Dex with two SREs, an approver and a viewer, the session gate and the
 * portal, each person with a kubeconfig of their own for hcpctl (hack/harness/sre-access.ts).
 */
import { execFile } from "node:child_process";
import { createWriteStream } from "node:fs";
import { copyFile, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../operators/api/v1alpha1/index.ts";
import { KubeClient, type KubeObject } from "../operators/runtime/kube.ts";
import { createLogger } from "../operators/runtime/logger.ts";
import { KubeConfig } from "@kubernetes/client-node";
import { readFile } from "node:fs/promises";
import { load } from "js-yaml";
import { startArmEmulator, type ArmEmulator } from "./harness/arm-emulator/index.ts";
import { setUpCustomerAzure } from "./harness/customer-azure.ts";
import { startStorageEmulator } from "./harness/storage-emulator/index.ts";
import { SOURCE_IDENTITY, type Broker } from "./harness/broker.ts";
import { startRegion, type RegionCluster } from "./harness/region.ts";
import { startMarketplaceEmulator } from "./harness/marketplace-emulator/index.ts";
import { startStack } from "./harness/stack.ts";
import { startSreAccess, type SreAccess } from "./harness/sre-access.ts";
import { DIMENSIONS } from "../operators/metering/segments.ts";
import { writeFile } from "node:fs/promises";
import {
  clusterBody,
  frontendAzure,
  frontendCerts,
  nodePoolBody,
  startTestFrontend,
} from "../test/support/frontend.ts";

const exec = promisify(execFile);
const stateDir = resolve(process.env.HCP_LOCAL_DIR ?? ".local");
/** The marketplace plan the local region reports usage against; the emulator takes any cluster on it. */
const LOCAL_PLAN = "hcp-local";

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
  const region = await startRegion({
    managementClusters: Number(process.env.HCP_MANAGEMENT_CLUSTERS ?? 2),
    postgres: true,
  });
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
  const stopped = new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  const { stack, arm, storage, market } = await startSoftware(region);
  lines.push(`  ARM emulator (Azure)  ${arm.endpoint}   CA ${arm.caPath}`);
  lines.push(`  OIDC issuers          ${storage.webEndpoint}<tenant>/<cluster>   CA ${storage.caPath}`);
  if (region.postgres)
    lines.push(
      `  usage ledger          ${region.postgres.url}`,
      `  Marketplace metering  ${market.endpoint}   CA ${market.caPath}   (emulator, plan ${LOCAL_PLAN})`,
      `  Try: npm run hcpctl -- usage --database-url ${region.postgres.url}`,
    );
  lines.push(...(await installBaseRbac(region.clusters, kubectl)));
  const frontend = await startFrontend(region, stack.namespace, arm);
  lines.push("", ...frontend.lines);
  const sre = await startSre(region, stack.namespace);
  lines.push(...sreLines(sre));
  process.stdout.write(lines.join("\n") + "\n");
  const service = region.clusters.find((c) => c.role === "service");
  if (service && process.env["HCP_LOCAL_SAMPLE"] !== "0") await applySampleAndWatch(service, stopped);
  process.stdout.write("Press Ctrl-C to stop and remove everything.\n");

  await stopped;
  process.stderr.write("Stopping the local region…\n");
  await frontend.stop();
  await sre?.stop();
  await stack.stop();
  await market.stop();
  await arm.stop();
  await storage.stop();
  await region.stop();
}

/**
 * The RBAC a region deploys, from the same bases (config/bases/<component>/rbac): the operators'
 * and the frontend's on the service cluster, the agent's on each management cluster. The
 * processes here still run with the admin kubeconfig; the least-privilege tests run them as
 * these ServiceAccounts.
 */
async function installBaseRbac(clusters: RegionCluster[], kubectl: string): Promise<string[]> {
  const bases = (c: RegionCluster) =>
    c.role === "service"
      ? ["config/bases/operators/rbac", "config/bases/frontend/rbac"]
      : ["config/bases/agent/rbac"];
  const cwd = fileURLToPath(new URL("..", import.meta.url));
  for (const c of clusters)
    for (const base of bases(c))
      await exec(kubectl, ["--kubeconfig", c.kubeconfigPath, "apply", "--server-side", "-k", base], { cwd });
  return [
    "  RBAC     config/bases/{operators,frontend}/rbac on service, config/bases/agent/rbac on each management cluster",
  ];
}

/**
 * Dex, the gate and the portal, when this process started the service cluster (their identities
 * are client certificates of its CA). People's kubeconfigs are copied to .local/people/.
 */
async function startSre(
  region: Awaited<ReturnType<typeof startRegion>>,
  namespace: string,
): Promise<SreAccess | undefined> {
  const service = region.clusters.find((c) => c.role === "service");
  if (!service?.apiServer || !region.workDir) return undefined;
  const kc = new KubeConfig();
  kc.loadFromFile(service.kubeconfigPath);
  const sre = await startSreAccess({
    workDir: region.workDir,
    serviceApiServerDir: join(region.workDir, service.name),
    serviceServer: service.url,
    admin: new KubeClient("service", kc),
    namespace,
  });
  const dir = join(stateDir, "people");
  await mkdir(dir, { recursive: true });
  for (const p of sre.people) await copyFile(p.kubeconfigPath, join(dir, `${p.username}.kubeconfig`));
  return sre;
}

function sreLines(sre: SreAccess | undefined): string[] {
  if (!sre) return [];
  const people = join(stateDir, "people");
  const hcpctl = `npm run hcpctl -- --kubeconfig ${join(people, "alice.kubeconfig")}`;
  return [
    "",
    `  SRE portal    ${sre.portal.url}   (CA ${sre.portal.caPath})`,
    `  session gate  ${sre.gate.url}`,
    `  sign-in (Dex) ${sre.dex.issuer}   people (email / password / groups; kubeconfig in ${people}/):`,
    ...sre.people.map((p) => `    ${p.email.padEnd(20)} ${p.password.padEnd(26)} ${p.groups.join(",")}`),
    "  Try:",
    `    ${hcpctl} session request demo -n default --level Admin --reason "look at the demo" --ttl 1h`,
    `    npm run hcpctl -- --kubeconfig ${join(people, "bob.kubeconfig")} session approve <session>`,
    `    ${hcpctl} session kubeconfig <session> --gate ${sre.gate.url} --gate-ca ${sre.gate.caPath} --issuer ${sre.dex.issuer} --client-id ${sre.dex.hcpctl.clientId} --issuer-ca ${sre.dex.caPath} > session.kubeconfig`,
    `    HCPCTL_OIDC_USERNAME=alice@example.com HCPCTL_OIDC_PASSWORD=<alice's> kubectl --kubeconfig session.kubeconfig get namespaces`,
  ];
}

const LOCAL_SUBSCRIPTION = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";

/**
 * The ARM frontend on a free port of 127.0.0.1, with a client certificate that stands for
 * ARM's, and example request bodies under .local/arm/ so that curl can drive it. It checks creates
 * against the ARM emulator, where the example cluster's identities and their roles are made.
 */
async function startFrontend(
  region: Awaited<ReturnType<typeof startRegion>>,
  catalogNamespace: string,
  arm: ArmEmulator,
) {
  const service = region.clusters.find((c) => c.role === "service");
  if (!service) throw new Error("no service cluster");
  const dir = join(stateDir, "arm");
  await mkdir(dir, { recursive: true });
  const certs = await frontendCerts(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(service.kubeconfigPath);
  // Like the other components, the frontend logs to a file of the work dir: every 5xx, and every
  // request with HCP_LOG_LEVEL=debug.
  const logPath = join(region.workDir || stateDir, "frontend.log");
  const logFile = createWriteStream(logPath, { flags: "a" });
  const log = createLogger({ component: "hcp-frontend" }, undefined, (line) => logFile.write(line));
  const azure = await frontendAzure(arm);
  const example = clusterBody(LOCAL_SUBSCRIPTION, { prefix: "armdemo" });
  await setUpCustomerAzure(azure, LOCAL_SUBSCRIPTION, example);
  // Notifications may go to a receiver on this machine (ARM's hosts are not reachable from here).
  const fe = await startTestFrontend({
    client: new KubeClient("service", kc),
    certs,
    catalogNamespace,
    log,
    notificationHosts: ["127.0.0.1", "localhost"],
    notifier: {},
    azure,
  });
  await writeFile(join(dir, "cluster.json"), JSON.stringify(example, null, 2));
  await writeFile(join(dir, "nodepool.json"), JSON.stringify(nodePoolBody({ replicas: 2 }), null, 2));
  await writeFile(
    join(dir, "subscription.json"),
    JSON.stringify({
      state: "Registered",
      registrationDate: new Date().toISOString(),
      properties: { tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47" },
    }),
  );
  const curl = `curl --cacert ${certs.servingCA} --cert ${certs.arm.certPath} --key ${certs.arm.keyPath} -H 'content-type: application/json'`;
  const rp = `${fe.url}/subscriptions/${LOCAL_SUBSCRIPTION}/resourceGroups/demo/providers/Microsoft.RedHatOpenShift`;
  const lines = [
    `  ARM frontend  ${fe.url}   (mutual TLS; ARM's client certificate: ${certs.arm.certPath})`,
    `  frontend log: ${logPath}`,
    "  Try:",
    `    ${curl} -X PUT '${fe.url}/subscriptions/${LOCAL_SUBSCRIPTION}?api-version=2.0' -d @${join(dir, "subscription.json")}`,
    `    ${curl} -X PUT '${rp}/hcpOpenShiftClusters/armdemo?api-version=2026-06-30-preview' -d @${join(dir, "cluster.json")}`,
    `    ${curl} '${rp}/hcpOpenShiftClusters/armdemo?api-version=2026-06-30-preview'`,
    `    ${curl} -X PUT '${rp}/hcpOpenShiftClusters/armdemo/nodePools/workers?api-version=2026-06-30-preview' -d @${join(dir, "nodepool.json")}`,
  ];
  const stop = async (): Promise<void> => {
    await fe.stop();
    await new Promise<void>((resolve) => logFile.end(() => resolve()));
  };
  return { lines, stop };
}

/** The controllers, agents and simulator, logging to a file in the work dir. */
async function startSoftware(region: Awaited<ReturnType<typeof startRegion>>) {
  const service = region.clusters.find((c) => c.role === "service");
  if (!service || !region.broker) throw new Error("the local region needs its service cluster and broker");
  const armDir = region.workDir || stateDir;
  const arm = await startArmEmulator({ workDir: armDir, asyncDelayMs: 500 });
  const [storage, market] = await Promise.all([
    startStorageEmulator({ workDir: armDir, verifyBearer: arm.verifyBearer }),
    startMarketplaceEmulator({
      workDir: armDir,
      verifyBearer: arm.verifyBearer,
      registerUnknown: { planId: LOCAL_PLAN, dimensions: [...DIMENSIONS] },
    }),
  ]);
  const broker = region.broker;
  const { postgres } = region;
  const stack = await startStack({
    serviceKubeconfig: service.kubeconfigPath,
    management: region.clusters
      .filter((c) => c.role === "management")
      .map((c) => ({ name: c.name, kubeconfigPath: c.kubeconfigPath })),
    broker: { url: broker.url, credentials: (identity) => broker.credentials(identity) },
    arm,
    storage,
    simulator: { provisionDelayMs: 5_000, deleteDelayMs: 2_000 },
    // The sample cluster's API is a real kube-apiserver, so that kubectl through the session gate
    // reaches a real API server and its audit log (issue 36). Not with HCP_KUBECONFIGS: no etcd here.
    ...(region.etcdUrl && {
      hostedApis: {
        hostedClusters: ["demo"],
        assetsDir: region.assetsDir,
        etcdUrl: region.etcdUrl,
        workDir: region.workDir,
      },
    }),
    // As deployed: the agents renew their broker certificates, signed with the broker's CA.
    agentCertificates: { signerCertPath: broker.caPath, signerKeyPath: broker.caKeyPath },
    // Without a PostgreSQL of its own (HCP_KUBECONFIGS) the region does not meter.
    ...(postgres && {
      metering: {
        databaseUrl: postgres.url,
        endpoint: market.endpoint,
        caPath: market.caPath,
        planId: LOCAL_PLAN,
      },
    }),
    log: createLogger({ component: "local" }, "error"),
  });
  return { stack, arm, storage, market };
}

const sampleFiles = ["hcpcluster.yaml", "nodepool-fixed.yaml", "nodepool-autoscaling.yaml"];

type Watched = HcpCluster | NodePool;

/** One line per object: its phase and why it is (not) Ready. */
function progressLine(o: Watched): string {
  const ready = o.status?.conditions?.find((x) => x.type === "Ready");
  const why = ready ? ` (${ready.reason}: ${ready.message})` : "";
  return `  ${o.kind ?? ""} ${o.metadata.name ?? ""}: ${o.status?.phase ?? "Pending"}${why}`;
}

const isReady = (o: Watched | undefined): boolean =>
  o?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false;

async function applySample(client: KubeClient): Promise<void> {
  const dir = new URL("../config/samples/", import.meta.url);
  for (const file of sampleFiles) {
    const obj = load(await readFile(new URL(file, dir), "utf8")) as KubeObject;
    const type = obj.kind === "HcpCluster" ? HcpClusterResource : NodePoolResource;
    const inDefault = { ...obj, metadata: { ...obj.metadata, namespace: "default" } };
    await client.apply(type, inDefault, { fieldManager: "hcp-local" });
  }
}

/** The sample cluster (if it exists yet) and the node pools in "default". */
async function readSample(client: KubeClient): Promise<{ cluster?: HcpCluster; watched: Watched[] }> {
  const cluster = await client.find<HcpCluster>(HcpClusterResource, "demo", "default");
  const pools = (await client.list<NodePool>(NodePoolResource, { namespace: "default" })).items;
  return { cluster, watched: [...(cluster ? [cluster] : []), ...pools] };
}

/** Prints each object's progress line when it differs from the one printed last. */
function printChanges(watched: Watched[], printed: Map<string, string>): void {
  for (const o of watched) {
    const key = `${o.kind ?? ""}/${o.metadata.name ?? ""}`;
    const line = progressLine(o);
    if (printed.get(key) !== line) process.stdout.write(line + "\n");
    printed.set(key, line);
  }
}

/** Applies config/samples' cluster and node pools in "default" and prints each change until Ready. */
async function applySampleAndWatch(service: RegionCluster, stopped: Promise<void>): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(service.kubeconfigPath);
  const client = new KubeClient("service", kc);
  await applySample(client);
  process.stdout.write(`Applied the sample: HcpCluster default/demo and its node pools. Progress:\n`);
  let stop = false;
  void stopped.then(() => (stop = true));
  const printed = new Map<string, string>();
  let cluster: HcpCluster | undefined;
  while (!stop) {
    const sample = await readSample(client);
    cluster = sample.cluster;
    printChanges(sample.watched, printed);
    if (cluster && sample.watched.every(isReady)) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  if (stop || !cluster) return;
  const { version = "?", managementCluster = "?", apiURL = "?" } = cluster.status ?? {};
  process.stdout.write(
    `The sample cluster is Ready: OpenShift ${version} on ${managementCluster}, API ${apiURL}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`local region failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
