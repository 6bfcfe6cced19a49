/**
 * The operators process: one Manager (probes, metrics, leader election, graceful shutdown) and
 * the service cluster it talks to (management clusters are reached only through the MQTT transport).
 * Controllers register here as they are added to the project.
 *
 *   --kubeconfig <path>            service cluster (default: in-cluster / $KUBECONFIG)
 *   --http-address <host:port>     probes and metrics (default 0.0.0.0:8080)
 *   --leader-elect                 run controllers only while holding the lease
 *   --namespace <ns>               where the lease lives (default hcp-system)
 *   --broker-url <mqtts://h:p>     run maestro-server against this MQTT 5 broker, with
 *   --broker-ca/-cert/-key <path>  its CA and this server's client certificate (CN "maestro")
 *   --agent-certificate-signer-cert/-key <path>  the agents' client CA, with which maestro-server
 *                                  signs agents' broker certificate renewals (both or neither)
 *   --agent-certificate-lifetime-hours <n>  how long a renewed agent certificate lasts (default 720)
 *   --base-domain <zone>           run the cluster, node pool and management cluster controllers;
 *                                  the region's parent DNS zone, which lives in
 *   --parent-zone-subscription <uuid> --parent-zone-resource-group <name>
 *   --environment <id>             ARO HCP's envIdentifier, in management-cluster namespaces (default "local")
 *   --keyvault <name>              Key Vault of the managed identities' credentials (default "hcp-mi")
 *   --pull-secret-file <path>      .dockerconfigjson for release images (default: empty auths)
 *   --azure-endpoint <url>         ARM endpoint (default https://management.azure.com)
 *   --azure-authority-host <url>   Entra ID authority (default: the SDK's)
 *   --azure-ca <path>              extra CA to trust for ARM and token calls (the emulator's)
 *   --oidc-issuer-base-url <url>   the clusters' OIDC issuers start with it (the region's Front Door)
 *   --oidc-container-url <url>     the blob container behind it (the OIDC storage account's $web)
 *   --oidc-storage-ca <path>       extra CA to trust for that container (the storage emulator's)
 *   --breakglass-retention-seconds <n>  how long an expired break-glass credential stays (default 86400)
 *   --session-readonly-max-seconds <n>, --session-admin-max-seconds <n>  the longest access session per
 *                                  level (defaults 43200 and 14400); --session-readonly-approval
 *                                  policy|person (default policy); --session-retention-seconds <n>
 *                                  how long an ended session stays (default 604800)
 *   --orphan-grace-seconds <n>     how long an orphaned Azure resource stays marked before deletion (default 86400)
 *   --soft-delete-retention-seconds <n>  how long a deleted cluster's Azure resources, OIDC issuer and
 *                                  keys are kept for an undelete (default 3600; 0 deletes them at once)
 *   --region-backup-container-url <url>  back the region's own objects up to this blob container, with
 *   --region-backup-key <path>     a 32-byte AES-256 key (raw or base64), every
 *   --region-backup-interval <s>   seconds (default 60), keeping --region-backup-retention (default 48);
 *   --region-backup-storage-ca <path>  extra CA to trust for that container (the storage emulator's)
 *   --metering-database-url <url>  record usage in this PostgreSQL ledger and report it (metering is
 *                                  off without it), to --metering-endpoint <url> (default Azure
 *                                  Marketplace's) for --metering-plan-id <id>, every
 *                                  --metering-interval-seconds <n> (default 60); --metering-ca <path>
 *                                  extra CA to trust for the endpoint (the emulator's)
 *   Credentials come from the usual chain (AZURE_* environment, workload identity, managed identity).
 */
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { ClusterRegistry } from "./runtime/clusters.ts";
import { loadClusterAccess } from "./runtime/kubeconfig.ts";
import { createLogger } from "./runtime/logger.ts";
import { Manager, signalHandler } from "./runtime/manager.ts";
import { readFile } from "node:fs/promises";
import { createBlobStore } from "./azure/blob.ts";
import { createAzureClients } from "./azure/clients.ts";
import { AzureClusterInfrastructure } from "./cluster/azure.ts";
import { ClusterController } from "./cluster/controller.ts";
import { BlobIssuerDocuments } from "./cluster/oidc.ts";
import { AgentCertificateSigner } from "./maestro-server/agent-certificates.ts";
import { MaestroServer } from "./maestro-server/controller.ts";
import { ManagementClusterController } from "./managementcluster/controller.ts";
import { RegionMonitor } from "./monitor/controller.ts";
import { AccessSessionController } from "./accesssession/controller.ts";
import {
  SESSION_POLICY_OPTIONS,
  sessionPolicyFromFlags,
  type SessionPolicyFlags,
} from "./accesssession/policy.ts";
import { BreakglassController } from "./breakglass/controller.ts";
import { NodePoolController } from "./nodepool/controller.ts";
import { ReleaseGraphController } from "./releasegraph/controller.ts";
import { ExternalAuthController } from "./externalauth/controller.ts";
import { MaintenanceController } from "./maintenance/controller.ts";
import { regionTaskRegistry } from "./maintenance/region-tasks.ts";
import { RolloutController } from "./rollout/controller.ts";
import { graceFromFlag, OrphanSweep } from "./orphansweep/controller.ts";
import { SoftDeletePurge } from "./softdelete/controller.ts";
import { regionBackupFromFlags } from "./regionbackup/flags.ts";
import { meteringFromFlags } from "./usage/flags.ts";
import type { Cluster } from "./runtime/clusters.ts";
import type { Logger } from "./runtime/logger.ts";
import type { AgentLivenessSource } from "./api/v1alpha1/managementcluster.ts";

const SERVICE_CLUSTER = "service";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      "http-address": { type: "string", default: "0.0.0.0:8080" },
      "leader-elect": { type: "boolean", default: false },
      namespace: { type: "string", default: "hcp-system" },
      "broker-url": { type: "string" },
      "broker-ca": { type: "string", default: "" },
      "broker-cert": { type: "string", default: "" },
      "broker-key": { type: "string", default: "" },
      "agent-certificate-signer-cert": { type: "string" },
      "agent-certificate-signer-key": { type: "string" },
      "agent-certificate-lifetime-hours": { type: "string", default: "720" },
      "base-domain": { type: "string" },
      "parent-zone-subscription": { type: "string", default: "" },
      "parent-zone-resource-group": { type: "string", default: "" },
      environment: { type: "string", default: "local" },
      keyvault: { type: "string", default: "hcp-mi" },
      "pull-secret-file": { type: "string" },
      "azure-endpoint": { type: "string" },
      "azure-authority-host": { type: "string" },
      "azure-ca": { type: "string" },
      "oidc-issuer-base-url": { type: "string" },
      "oidc-container-url": { type: "string" },
      "oidc-storage-ca": { type: "string" },
      "breakglass-retention-seconds": { type: "string", default: "86400" },
      ...SESSION_POLICY_OPTIONS,
      "orphan-grace-seconds": { type: "string", default: "86400" },
      "soft-delete-retention-seconds": { type: "string", default: "3600" },
      "region-backup-container-url": { type: "string" },
      "region-backup-key": { type: "string" },
      "region-backup-interval": { type: "string", default: "60" },
      "region-backup-retention": { type: "string", default: "48" },
      "region-backup-storage-ca": { type: "string" },
      "metering-database-url": { type: "string" },
      "metering-endpoint": { type: "string" },
      "metering-plan-id": { type: "string" },
      "metering-interval-seconds": { type: "string", default: "60" },
      "metering-ca": { type: "string" },
    },
  });
  const log = createLogger({ component: "hcp-operators" });
  const clusters = new ClusterRegistry(log);
  const service = clusters.add(
    SERVICE_CLUSTER,
    loadClusterAccess(values.kubeconfig ? { path: values.kubeconfig } : { default: true }),
  );
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
  let server: MaestroServer | undefined;
  if (values["broker-url"]) {
    server = new MaestroServer({
      cluster: service,
      log,
      broker: {
        url: values["broker-url"],
        caFile: values["broker-ca"],
        certFile: values["broker-cert"],
        keyFile: values["broker-key"],
        clientId: `maestro-${hostname()}`,
      },
      agentCertificates: agentCertificateSigner(values, log),
    });
    manager.add(server);
    // A follower holds no broker connection; readiness must not depend on leadership.
    const connection = server.connection;
    manager.addReadyCheck("broker", () => !manager.isLeader() || connection.isConnected());
  }
  if (values["base-domain"]) {
    for (const r of await lifecycleControllers(values, service, log, server?.agents)) manager.add(r);
  }
  const backup = await regionBackupFromFlags(values, service.client, log);
  if (backup) manager.add(backup);
  for (const r of await meteringFromFlags(values, service, log)) manager.add(r);
  await manager.start(signalHandler(log));
  clusters.stopAll();
}

/** The signer of agents' certificate renewals, when both of its files are given. */
function agentCertificateSigner(
  values: {
    "agent-certificate-signer-cert"?: string;
    "agent-certificate-signer-key"?: string;
    "agent-certificate-lifetime-hours": string;
  },
  log: Logger,
): AgentCertificateSigner | undefined {
  const certFile = values["agent-certificate-signer-cert"];
  const keyFile = values["agent-certificate-signer-key"];
  if (!certFile && !keyFile) return undefined;
  if (!certFile) throw new Error("--agent-certificate-signer-key needs --agent-certificate-signer-cert");
  if (!keyFile) throw new Error("--agent-certificate-signer-cert needs --agent-certificate-signer-key");
  const hours = Number(values["agent-certificate-lifetime-hours"]);
  if (!Number.isFinite(hours) || hours < 1 || hours > 24 * 366)
    throw new Error("--agent-certificate-lifetime-hours must be a number of hours from 1 to 8784");
  return new AgentCertificateSigner({ certFile, keyFile, lifetimeMs: hours * 3_600_000, log });
}

interface LifecycleFlags extends SessionPolicyFlags {
  namespace: string;
  "base-domain"?: string;
  "parent-zone-subscription": string;
  "parent-zone-resource-group": string;
  environment: string;
  keyvault: string;
  "pull-secret-file"?: string;
  "azure-endpoint"?: string;
  "azure-authority-host"?: string;
  "azure-ca"?: string;
  "oidc-issuer-base-url"?: string;
  "oidc-container-url"?: string;
  "oidc-storage-ca"?: string;
  "breakglass-retention-seconds": string;
  "orphan-grace-seconds": string;
  "soft-delete-retention-seconds": string;
}

/**
 * The cluster, node pool and management cluster controllers, with their Azure clients, the
 * maintenance controller, and the region monitor's gauges. With maestro-server in the same
 * process, the management cluster controller shows its agent liveness.
 */
async function lifecycleControllers(
  values: LifecycleFlags,
  service: Cluster,
  log: Logger,
  agents?: AgentLivenessSource,
) {
  const baseDomain = values["base-domain"] ?? "";
  if (!values["parent-zone-subscription"] || !values["parent-zone-resource-group"])
    throw new Error("--base-domain needs --parent-zone-subscription and --parent-zone-resource-group");
  const issuerBaseURL = values["oidc-issuer-base-url"];
  const containerUrl = values["oidc-container-url"];
  if (!issuerBaseURL?.startsWith("https://") || !containerUrl)
    throw new Error("--base-domain needs --oidc-issuer-base-url (https://…) and --oidc-container-url");
  const region = {
    environment: values.environment,
    baseDomain,
    managedIdentitiesKeyVault: values.keyvault,
    pullSecret: values["pull-secret-file"]
      ? await readFile(values["pull-secret-file"], "utf8")
      : '{"auths":{}}',
  };
  const parentZone = {
    subscriptionId: values["parent-zone-subscription"],
    resourceGroup: values["parent-zone-resource-group"],
    name: baseDomain,
  };
  const azure = await createAzureClients({
    armEndpoint: values["azure-endpoint"],
    authorityHost: values["azure-authority-host"],
    caFile: values["azure-ca"],
  });
  const infra = new AzureClusterInfrastructure(azure, parentZone);
  const documents = new BlobIssuerDocuments(
    await createBlobStore({ containerUrl, credential: azure.credential, caFile: values["oidc-storage-ca"] }),
  );
  const oidc = { issuerBaseURL, documents };
  const namespace = values.namespace;
  const retentionSeconds = Number(values["breakglass-retention-seconds"]);
  if (!Number.isFinite(retentionSeconds) || retentionSeconds < 0)
    throw new Error("--breakglass-retention-seconds must be a number of seconds, 0 or more");
  const clusterController = new ClusterController({
    cluster: service,
    namespace,
    region,
    parentZone,
    infra,
    oidc,
    softDeleteRetentionMs: graceFromFlag(
      "--soft-delete-retention-seconds",
      values["soft-delete-retention-seconds"],
    ),
    log,
  });
  // Maintenance steps act through the controllers that own what they change (a controller may
  // not import another; this file may): the signing-key rotation is the cluster controller's.
  const tasks = regionTaskRegistry({
    service,
    namespace,
    signingKeys: clusterController.signingKeyRotation,
  });
  return [
    clusterController,
    new MaintenanceController({ cluster: service, tasks, log }),
    new RolloutController({ cluster: service, log }),
    new NodePoolController({ cluster: service, namespace, region, log }),
    new ReleaseGraphController({ cluster: service, namespace, log }),
    new ExternalAuthController({ cluster: service, region, log }),
    new BreakglassController({
      cluster: service,
      region,
      namespace,
      expiredRetentionMs: retentionSeconds * 1000,
      log,
    }),
    new AccessSessionController({
      cluster: service,
      region,
      namespace,
      policy: sessionPolicyFromFlags(values),
      log,
    }),
    new ManagementClusterController({ cluster: service, agents, log }),
    new RegionMonitor({ cluster: service, agents }),
    new OrphanSweep({
      cluster: service,
      azure,
      parentZone,
      namespace,
      graceMs: graceFromFlag("--orphan-grace-seconds", values["orphan-grace-seconds"]),
      log,
    }),
    // The purge acts through the cluster controller's Azure client and key store (main.ts may
    // hand one controller's means to another; they may not import each other).
    new SoftDeletePurge({ cluster: service, namespace, retained: clusterController.retainedResources, log }),
  ];
}

main().catch((err: unknown) => {
  process.stderr.write(`hcp-operators: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
