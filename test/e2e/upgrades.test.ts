/**
 * Versions move along the update graph, on the local region, for a kubectl user: a catalog of the
 * test's own (its ends of life relative to now) in the operators' namespace; a cluster pinned to
 * 4.19.7 with upgradePolicy AutomaticPatch. The API server refuses a version change the graph
 * holds, `kubectl apply --dry-run=server` included, in the plan's words (the admission policy
 * hcp-update-graph and the parameters the release-graph controller keeps); `hcpctl upgrade plan`
 * shows the path and why a target is refused; a newer z-stream added to the catalog ConfigMap
 * moves the HostedCluster's release image on the management cluster, told in one event; a node
 * pool too far behind is held, and holds the cluster's upgrade, by name. Every step waits for
 * evidence in the objects, the events or the command's output.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { dump } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { CATALOG_CONFIGMAP, CATALOG_KEY, configMapType } from "../../operators/releases/catalog.ts";
import { GRAPH_PARAMS_CONFIGMAP } from "../../operators/releases/graph-params.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { clusterInfo, kubectlPath } from "../support/region.ts";
import { sampleCluster, sampleFixedPool } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const exec = promisify(execFile);
const LIFECYCLE_MS = 90_000;
const DAY = 24 * 3600 * 1000;
const service = clientFor("service");
const customer = `upgrades-${process.pid}`;
const kubeconfig = clusterInfo("service").kubeconfigPath;

let running: TestStack | undefined;
let scratch: { path: string; remove(): Promise<void> };
let operators = "";

/** A month ago: the catalog's ends of life are relative to now, never the calendar. */
const ENDED = new Date(Date.now() - 30 * DAY).toISOString().replace(/\.\d+Z$/, "Z");
const release = (v: string, extra = ""): string =>
  `  - {version: ${v}, image: "quay.io/openshift-release-dev/ocp-release:${v}-multi"${extra}}\n`;
/** 4.17 past its end of life; 4.20.2 reached from 4.19.9 only, which the catalog does not offer yet. */
const CATALOG = [
  release("4.16.9"),
  release("4.17.40", `, endOfLifeTimestamp: "${ENDED}"`),
  release("4.18.22"),
  release("4.19.7"),
  release("4.20.2", ", upgradesFrom: [4.19.9]"),
].join("");
const WITH_4_19_9 = CATALOG + release("4.19.9", ", upgradesFrom: [4.19.7]");

async function writeCatalog(text: string): Promise<void> {
  await service.apply(
    configMapType,
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: CATALOG_CONFIGMAP, namespace: operators },
      data: { [CATALOG_KEY]: `releases:\n${text}` },
    },
    { fieldManager: "upgrades-test", force: true },
  );
}

function cond(
  obj: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

/** `kubectl apply [--dry-run=server]` of the objects; resolves what kubectl said, never throws. */
async function kubectlApply(
  objects: KubeObject[],
  ...flags: string[]
): Promise<{ code: number; output: string }> {
  const file = join(scratch.path, `apply-${Date.now()}-${Math.random()}.yaml`);
  await writeFile(file, objects.map((o) => dump(o)).join("---\n"));
  try {
    const { stdout, stderr } = await exec(kubectlPath(), [
      "--kubeconfig",
      kubeconfig,
      "apply",
      ...flags,
      "-f",
      file,
    ]);
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, output: (e.stdout ?? "") + (e.stderr ?? "") };
  }
}

const getCluster = (name: string) => service.find<HcpCluster>(HcpClusterResource, name, customer);
const getPool = (name: string) => service.find<NodePool>(NodePoolResource, name, customer);

const cluster = sampleCluster();
cluster.metadata = { name: "graph", namespace: customer };
cluster.spec.version = { id: "4.19.7", channelGroup: "stable", upgradePolicy: "AutomaticPatch" };
cluster.spec.dns.baseDomainPrefix = `up${process.pid % 100000}`;
delete cluster.spec.placement;

function pool(name: string, version: string): NodePool {
  const p = sampleFixedPool();
  p.metadata = { name, namespace: customer };
  p.spec.clusterRef.name = "graph";
  p.spec.version = { id: version };
  p.spec.replicas = 1;
  return p;
}

/** The cluster with another spec.version.id, as a user would apply it. */
const withVersion = (id: string): HcpCluster => ({
  ...cluster,
  spec: { ...cluster.spec, version: { ...cluster.spec.version, id } },
});

beforeAll(async () => {
  scratch = await scratchDir("upgrades");
  running = await startTestStack("upgrades", { simulator: { provisionDelayMs: 500, deleteDelayMs: 300 } });
  operators = running.stack.namespace;
  await writeCatalog(CATALOG);
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  // The cluster and its pools go while the controllers still run, so that their finalizers are
  // released and no later test's controllers find them (the service apiserver is shared).
  for (const name of ["ancient", "behind"])
    await service.delete(NodePoolResource, { name, namespace: customer }).catch(() => undefined);
  await service.delete(HcpClusterResource, { name: "graph", namespace: customer }).catch(() => undefined);
  await eventually(
    "the test's cluster and pools gone",
    async () =>
      (await service.list(HcpClusterResource, { namespace: customer })).items.length === 0 &&
      (await service.list(NodePoolResource, { namespace: customer })).items.length === 0,
    LIFECYCLE_MS,
  ).catch(() => undefined);
  await running?.stop();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
  await scratch?.remove();
});

describe("the update graph for kubectl users", () => {
  it("refuses a new cluster on a release past its end of life at the API server, dry run included", async () => {
    await eventually(
      "the release-graph controller's parameters for the test's catalog",
      async () => {
        const cm = await service.find<KubeObject>(configMapType, GRAPH_PARAMS_CONFIGMAP, operators);
        return Boolean((cm?.["data"] as Record<string, string> | undefined)?.["stable.new.to.4.17"]);
      },
      30_000,
    );
    const ended = { ...withVersion("4.17"), metadata: { name: "ended", namespace: customer } };
    let refused = { code: 0, output: "" };
    // The policy takes effect a moment after the harness stores it: wait for it to answer.
    await eventually(
      "the dry run refused",
      async () => (refused = await kubectlApply([ended], "--dry-run=server")).code !== 0,
      30_000,
    );
    expect(refused.output).toContain(
      `spec.version.id 4.17 (channel group stable): OpenShift 4.17 reached its end of life on ${ENDED.slice(0, 10)}: no new cluster runs it and no cluster moves to it; offered in channel group stable: 4.16, 4.18, 4.19, 4.20`,
    );
    expect(await service.find(HcpClusterResource, "ended", customer)).toBeUndefined();
  });

  it("creates the cluster on its pinned release, Ready", async () => {
    expect((await kubectlApply([cluster])).code).toBe(0);
    await eventually(
      "the cluster Ready on 4.19.7",
      async () => {
        const c = await getCluster("graph");
        return cond(c, "Ready")?.status === "True" && c?.status?.version === "4.19.7";
      },
      LIFECYCLE_MS,
    );
    expect((await getCluster("graph"))?.status).toMatchObject({ desiredVersion: "4.19.7" });
    // Judged once the status says what runs: the reconcile after the one that wrote it.
    await eventually(
      "VersionEndOfLife on the release that runs",
      async () => cond(await getCluster("graph"), "VersionEndOfLife")?.reason === "Supported",
      LIFECYCLE_MS,
    );
    expect(cond(await getCluster("graph"), "VersionEndOfLife")).toMatchObject({
      status: "False",
      message: "The release catalog gives OpenShift 4.19.7 no end of life",
    });
  });

  it("refuses an upgrade the graph has no edge for, dry run included, in the plan's words; hcpctl says the same", async () => {
    const dry = await kubectlApply([withVersion("4.20")], "--dry-run=server");
    const reason =
      "no release of 4.20 in channel group stable can be reached from 4.19.7: the update graph of channel group stable has no edge from 4.19.7 to 4.20.2 (it upgrades from 4.19.9)";
    expect(dry.code).not.toBe(0);
    expect(dry.output).toContain(`spec.version.id 4.20 (channel group stable): ${reason}`);
    expect((await getCluster("graph"))?.spec.version.id).toBe("4.19.7");

    const plan = await runHcpctl(
      "upgrade",
      "plan",
      "graph",
      "--to",
      "4.20",
      "-n",
      customer,
      "--catalog-namespace",
      operators,
      "--kubeconfig",
      kubeconfig,
    );
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain("Runs:            4.19.7\n");
    expect(plan.stdout).toContain(`Refused:\n  NoUpdateEdge  ${reason}\n`);
    expect(plan.stderr).toBe(`error: the upgrade of ${customer}/graph to 4.20 is refused: ${reason}\n`);
  });

  it("moves the control plane to a newer patch the catalog comes to offer, with upgradePolicy AutomaticPatch", async () => {
    await writeCatalog(WITH_4_19_9);
    const c = (await getCluster("graph"))!;
    const mgmt = clientFor(c.status!.managementCluster!);
    await eventually(
      "the HostedCluster on 4.19.9 and the cluster running it",
      async () => {
        const hc = await mgmt.find<HostedCluster>(
          HostedClusterResource,
          cluster.spec.dns.baseDomainPrefix,
          c.status!.hostedClusterNamespace,
        );
        const now = await getCluster("graph");
        return hc?.spec.release.image.endsWith(":4.19.9-multi") === true && now?.status?.version === "4.19.9";
      },
      LIFECYCLE_MS,
    );
    // The user's spec is the user's: the release the controller resolved moved, the spec did not.
    const after = (await getCluster("graph"))!;
    expect(after.spec.version.id).toBe("4.19.7");
    expect(after.status?.desiredVersion).toBe("4.19.9");
    const events = (
      await service.list<KubeObject & { reason: string; message: string; involvedObject: { name: string } }>(
        eventType,
        { namespace: customer },
      )
    ).items.filter((e) => e.involvedObject.name === "graph" && e.reason === "Upgrading");
    expect(events.map((e) => e.message)).toEqual([
      "Upgrading from 4.19.7 to 4.19.9: automatic patch upgrade",
    ]);
  });

  it("holds a node pool too far behind, and the cluster's upgrade that would leave one behind, naming it", async () => {
    expect((await kubectlApply([pool("ancient", "4.16.9"), pool("behind", "4.17.40")])).code).toBe(0);
    await eventually(
      "the ancient pool held, the other Ready",
      async () =>
        cond(await getPool("ancient"), "ValidVersion")?.reason === "TooFarBehind" &&
        cond(await getPool("behind"), "Ready")?.status === "True",
      LIFECYCLE_MS,
    );
    expect(cond(await getPool("ancient"), "ValidVersion")?.message).toContain(
      "nodes on 4.16 may run at most 2 minor versions behind their control plane on 4.19",
    );
    // 4.19.9 → 4.20.2 is an edge now: the API server lets it through; the pool holds it.
    expect((await kubectlApply([withVersion("4.20")])).code).toBe(0);
    await eventually(
      "the upgrade held by the pool",
      async () => cond(await getCluster("graph"), "ValidVersion")?.reason === "NodePoolsTooFarBehind",
      LIFECYCLE_MS,
    );
    expect(cond(await getCluster("graph"), "ValidVersion")?.message).toBe(
      "Version 4.20.2 would leave node pools too far behind; upgrade them first (node pool behind: nodes on 4.17 may run at most 2 minor versions behind their control plane on 4.20)",
    );
    expect((await getCluster("graph"))?.status).toMatchObject({
      version: "4.19.9",
      desiredVersion: "4.19.9",
    });
  });
});
