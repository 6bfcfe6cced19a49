/**
 * `hcpctl upgrade plan CLUSTER [--to VERSION]`: where an HcpCluster's version would lead on the
 * region's update graph, from the release its control plane runs: each hop, what each node pool
 * does, and what holds the upgrade and why, planned by the same module (releases/plan.ts) the
 * frontend refuses with and the cluster controller holds with. Reads the cluster, its node pools
 * and the release catalog ConfigMap; writes nothing. Exit 1 when the upgrade is held.
 */
import { ConfigMapResource } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta/v1.ts";
import {
  CHANNEL_GROUPS,
  HcpClusterResource,
  NodePoolResource,
  type ChannelGroup,
  type HcpCluster,
  type NodePool,
  type UpgradePolicy,
} from "../../api/v1alpha1/index.ts";
import {
  CATALOG_CONFIGMAP,
  CATALOG_KEY,
  ReleaseCatalog,
  parseVersion,
  unavailableCatalog,
} from "../../releases/catalog.ts";
import { planVersion } from "../../releases/plan.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { toJson, toYaml } from "../output.ts";
import { renderPlan, upgradePlan, type UpgradePlan } from "../render-plan.ts";

export interface UpgradePlanOptions {
  namespace?: string;
  to?: string;
  channelGroup?: string;
  catalogNamespace: string;
  output?: "json" | "yaml";
}

/** Checks what needs no connection: a version such as 4.20 or 4.20.2, a channel group the API has. */
function checkArguments(opts: UpgradePlanOptions): void {
  if (opts.to !== undefined && !parseVersion(opts.to))
    throw new CliError(`--to "${opts.to}" is not an OpenShift version such as 4.20 or 4.20.2`);
  if (opts.channelGroup !== undefined && !CHANNEL_GROUPS.includes(opts.channelGroup as ChannelGroup))
    throw new CliError(`--channel-group "${opts.channelGroup}" is not one of ${CHANNEL_GROUPS.join(", ")}`);
}

/** The catalog as the operators read it; a missing ConfigMap plans nothing, and says why. */
async function readCatalog(conn: Connection, namespace: string): Promise<ReleaseCatalog> {
  const cm = await conn.get<KubeObject>(ConfigMapResource, CATALOG_CONFIGMAP, namespace);
  if (!cm)
    return unavailableCatalog(
      `the release catalog ConfigMap ${namespace}/${CATALOG_CONFIGMAP} does not exist (pass --catalog-namespace where the operators run)`,
    );
  const data = cm["data"] as Record<string, string> | undefined;
  return ReleaseCatalog.parse(data?.[CATALOG_KEY]);
}

async function readCluster(
  conn: Connection,
  name: string,
  namespace: string,
): Promise<{ cluster: HcpCluster; pools: NodePool[] }> {
  const [cluster, pools] = await Promise.all([
    conn.get<HcpCluster>(HcpClusterResource, name, namespace),
    conn.list<NodePool>(NodePoolResource, { namespace }),
  ]);
  if (!cluster) throw new CliError(`hcpcluster "${name}" not found in namespace "${namespace}"`);
  const own = pools.items.filter((p) => p.spec.clusterRef.name === name && !p.metadata.deletionTimestamp);
  return { cluster, pools: own };
}

/** The version to plan: --to and --channel-group over the cluster's own. */
function versionAsked(
  cluster: HcpCluster,
  opts: UpgradePlanOptions,
): { id: string; channelGroup: ChannelGroup; upgradePolicy: UpgradePolicy } {
  const spec = cluster.spec.version;
  return {
    id: opts.to ?? spec.id,
    channelGroup: (opts.channelGroup as ChannelGroup | undefined) ?? spec.channelGroup ?? "stable",
    upgradePolicy: spec.upgradePolicy ?? "Manual",
  };
}

function write(io: Io, doc: UpgradePlan, output: UpgradePlanOptions["output"]): void {
  if (output === "json") io.stdout.write(toJson(doc));
  else if (output === "yaml") io.stdout.write(toYaml(doc));
  else io.stdout.write(renderPlan(doc, io.paint));
}

export async function runUpgradePlan(
  io: Io,
  connect: Connect,
  args: { name: string; opts: UpgradePlanOptions },
): Promise<void> {
  const { name, opts } = args;
  checkArguments(opts);
  const conn = connect();
  const namespace = opts.namespace ?? conn.namespace;
  const [{ cluster, pools }, catalog] = await Promise.all([
    readCluster(conn, name, namespace),
    readCatalog(conn, opts.catalogNamespace),
  ]);
  const version = versionAsked(cluster, opts);
  const { status } = cluster;
  const plan = planVersion({
    catalog,
    version,
    running: status?.version,
    previous: status?.desiredVersion,
    pools: pools.map((p) => ({
      name: p.metadata.name ?? "",
      ...(p.spec.version ? { version: p.spec.version.id } : {}),
    })),
    now: io.now(),
  });
  const { upgradePolicy } = version;
  write(
    io,
    upgradePlan({
      namespace,
      name,
      to: version.id,
      upgradePolicy,
      runs: status?.version,
      desired: status?.desiredVersion,
      plan,
    }),
    opts.output,
  );
  const [hold] = plan.holds;
  if (hold)
    throw new CliError(`the upgrade of ${namespace}/${name} to ${version.id} is refused: ${hold.message}`);
}
