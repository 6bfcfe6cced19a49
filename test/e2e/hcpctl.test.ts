/**
 * hcpctl against the local region, as an SRE runs it: the real `kubectl` with `kubectl-hcp` on
 * PATH (`kubectl hcp …`) and the `hcpctl` bin, both reading the service cluster only. One cluster
 * reaches Ready; another is deleted while its node pool carries a finalizer no controller here
 * owns, so its deletion stays blocked until the test lifts the finalizer. Every step waits for
 * evidence in the objects' status or in the command's output.
 */
import { execFile, spawn } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import type { ClusterTree, TreeNode } from "../../operators/hcpctl/model.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { clusterInfo, kubectlPath } from "../support/region.ts";
import { sampleCluster, sampleFixedPool } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const exec = promisify(execFile);
const bins = fileURLToPath(new URL("../../operators/hcpctl/", import.meta.url));
const HOLD = "example.com/hold";
const READY_MS = 60_000;

const service = clientFor("service");
const ns = `sre-${process.pid}`;
let running: TestStack | undefined;
let scratch: { path: string; remove(): Promise<void> };
let env: NodeJS.ProcessEnv;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command with the plugin on PATH and the service cluster's kubeconfig; never throws. */
async function sh(file: string, args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(file, args, { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

const kubectlHcp = (...args: string[]): Promise<Run> => sh(kubectlPath(), ["hcp", ...args]);
const hcpctl = (...args: string[]): Promise<Run> => sh("hcpctl", args);

/** A long-running command; resolves its output once it exits, and can wait for text in its stdout. */
function start(file: string, args: string[]) {
  const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Run>((resolve) =>
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr })),
  );
  return {
    exited,
    output: () => stdout,
    kill: () => child.kill("SIGINT"),
  };
}

const cond = (
  o: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined => o?.status?.conditions?.find((c) => c.type === type);
const getCluster = (name: string) => service.find<HcpCluster>(HcpClusterResource, name, ns);
const getPool = (name: string) => service.find<NodePool>(NodePoolResource, name, ns);

function cluster(name: string): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name, namespace: ns };
  c.spec.dns.baseDomainPrefix = `${name}${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `sre-${name}-${process.pid}`;
  delete c.spec.placement;
  return c;
}

function pool(name: string, clusterName: string, finalizers?: string[]): NodePool {
  const p = sampleFixedPool();
  p.metadata = { name, namespace: ns, ...(finalizers ? { finalizers } : {}) };
  p.spec.clusterRef.name = clusterName;
  return p;
}

function child(node: TreeNode, kind: string, name?: string): TreeNode {
  const found = node.children.find((c) => c.kind === kind && (name === undefined || c.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ""} under ${node.kind}/${node.name}`);
  return found;
}

beforeAll(async () => {
  scratch = await scratchDir("hcpctl");
  const bin = join(scratch.path, "bin");
  await mkdir(bin);
  await symlink(join(bins, "kubectl-hcp.ts"), join(bin, "kubectl-hcp"));
  await symlink(join(bins, "hcpctl.ts"), join(bin, "hcpctl"));
  // The bins start with `#!/usr/bin/env node`: the Node that runs this test (24) comes first.
  const path = [bin, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);
  env = {
    ...process.env,
    PATH: path,
    KUBECONFIG: clusterInfo("service").kubeconfigPath,
    NO_COLOR: undefined,
  };
  running = await startTestStack("hcpctl", { simulator: { provisionDelayMs: 300, deleteDelayMs: 100 } });
  await service.create(namespaceType, { metadata: { name: ns } });
  for (const obj of [cluster("ready"), cluster("stuck")]) await service.create(HcpClusterResource, obj);
  await service.create(NodePoolResource, pool("workers", "ready"));
  await service.create(NodePoolResource, pool("held", "stuck", [HOLD]));
  await eventually(
    "both clusters and their pools Ready",
    async () => {
      const objs = await Promise.all([
        getCluster("ready"),
        getCluster("stuck"),
        getPool("workers"),
        getPool("held"),
      ]);
      return objs.every((o) => cond(o, "Ready")?.status === "True");
    },
    READY_MS,
  );
}, 150_000);

afterAll(async () => {
  await service
    .mergePatch(NodePoolResource, { name: "held", namespace: ns }, { metadata: { finalizers: null } })
    .catch(() => undefined);
  await running?.stop();
  await scratch?.remove();
});

describe("hcpctl on the local region", () => {
  it("lists clusters, node pools and management clusters, through kubectl and directly", async () => {
    const clusters = await kubectlHcp("get", "clusters", "-n", ns);
    expect(clusters.stderr).toBe("");
    expect(clusters.stdout.split("\n")[0]).toMatch(
      /^NAME\s+VERSION\s+PHASE\s+READY\s+MANAGEMENT CLUSTER\s+AGE$/,
    );
    expect(clusters.stdout).toMatch(/\nready\s+4\.19\.7\s+Ready\s+True\s+mgmt-[12]\s+\d+s\n/);

    const json = await hcpctl("get", "clusters", "-n", ns, "-o", "json");
    const list = JSON.parse(json.stdout) as { kind: string; items: HcpCluster[] };
    expect(list.kind).toBe("List");
    expect(list.items.map((c) => [c.metadata.name, c.status?.phase])).toEqual([
      ["ready", "Ready"],
      ["stuck", "Ready"],
    ]);

    const pools = await kubectlHcp("get", "nodepools", "-n", ns, "-o", "wide");
    expect(pools.stdout).toMatch(
      /\nworkers\s+ready\s+4\.19\.7\s+Ready\s+True\s+2\/2\s+\S+\s+AsExpected\s+1\/1\s+Standard_D8s_v3\s+mgmt-[12]\s+-\n/,
    );

    const mcs = await kubectlHcp("get", "mc");
    expect(mcs.stdout).toMatch(/\nmgmt-1\s+mgmt-1\s+Ready\s+true\s+\d+\/\d+\s+/);

    const placed = (await getCluster("ready"))!.status!.managementCluster!;
    const on = await hcpctl("get", "clusters", "-n", ns, "--management-cluster", placed, "-o", "name");
    expect(on.stdout.split("\n")).toContain("hcpcluster.hcp.aro.dev/ready");
  });

  it("names what is wrong, with a non-zero exit code", async () => {
    expect(await kubectlHcp("describe", "cluster", "nope", "-n", ns)).toMatchObject({
      code: 1,
      stdout: "",
      stderr: `error: hcpcluster "nope" not found in namespace "${ns}"\n`,
    });
  });

  it("describes a Ready cluster across both sides, as text and as the same tree in JSON", async () => {
    const c = (await getCluster("ready"))!;
    const prefix = c.spec.dns.baseDomainPrefix;
    const text = await kubectlHcp("describe", "cluster", "ready", "-n", ns);
    expect(text.code).toBe(0);
    const out = text.stdout;
    expect(out).not.toContain("\u001b[");
    expect(out.split("\n")[0]).toMatch(/^NAME\s+READY\s+SEVERITY\s+REASON\s+SINCE\s+MESSAGE$/);
    expect(out).toMatch(
      /\nHcpCluster\/ready\s+True\s+AsExpected\s+\S+\s+The cluster is ready on mgmt-[12]\n/,
    );
    expect(out).toMatch(/├─NodePools\n│ └─NodePool\/workers\s+True\s+AsExpected/);
    expect(out).toMatch(
      new RegExp(
        `│ ├─ManifestWork/${c.metadata.uid}\\s+True\\s+Applied\\s+\\S+\\s+generation 1 sent, 1 applied; status written \\S+ ago\\n`,
      ),
    );
    expect(out).toMatch(new RegExp(`│ │ └─HostedCluster/${prefix}\\s+True\\s+AsExpected\\s+\\S+\\s+`));
    expect(out).toMatch(new RegExp(`│   └─NodePool/${prefix}-workers\\s+True\\s+AsExpected`));
    expect(out).toMatch(/└─Azure\n {2}└─5 Azure resources\s+True\s+AsExpected\s+\S+\s+See ResourceGroup\//);

    const json = await hcpctl("describe", "cluster", "ready", "-n", ns, "-o", "json");
    const tree = JSON.parse(json.stdout) as ClusterTree;
    expect(tree.kind).toBe("ClusterTree");
    expect(tree.root.summary).toMatchObject({ ready: "True", condition: "Ready" });
    const mc = child(tree.root, "ManagementCluster", c.status!.managementCluster);
    const work = child(mc, "ManifestWork", c.metadata.uid);
    expect(work.details).toMatchObject({ generation: 1, publishedGeneration: 1, appliedGeneration: 1 });
    expect(typeof work.details.statusWrittenAt).toBe("string");
    const hc = child(work, "HostedCluster", prefix);
    expect(hc.apiGroup).toBe("hypershift.openshift.io");
    expect(hc.details).toMatchObject({ version: "4.19.7", endpoint: `api.${prefix}.hcp.example.com:443` });
    expect(hc.conditions.find((x) => x.type === "Available")?.status).toBe("True");
    expect(child(tree.root, "", "NodePools").children.map((p) => p.name)).toEqual(["workers"]);
  });

  it("waits for a condition, and times out on one that does not come", async () => {
    expect(
      await hcpctl("wait", "cluster", "ready", "-n", ns, "--for", "condition=Ready", "--timeout", "20m"),
    ).toMatchObject({
      code: 0,
      stdout: "hcpcluster.hcp.aro.dev/ready condition met\n",
    });
    expect(
      await kubectlHcp(
        "wait",
        "cluster",
        "ready",
        "-n",
        ns,
        "--for",
        "condition=Degraded",
        "--timeout",
        "1s",
      ),
    ).toMatchObject({
      code: 1,
      stderr: "error: timed out waiting for the condition on hcpclusters/ready\n",
    });
  });

  it("shows what blocks a deletion, redraws with --watch, and waits for the deletion", async () => {
    await service.delete(HcpClusterResource, { name: "stuck", namespace: ns });
    // Evidence the block is in place: the cluster waits for its pool, and the pool's own finalizer is gone.
    await eventually(
      "the cluster held by its node pool, the pool by the foreign finalizer alone",
      async () => {
        const [c, p] = await Promise.all([getCluster("stuck"), getPool("held")]);
        return cond(c, "Deleting")?.reason === "DeletingNodePools" && p?.metadata.finalizers?.join() === HOLD;
      },
      READY_MS,
    );
    const text = await kubectlHcp("describe", "cluster", "stuck", "-n", ns);
    expect(text.stdout).toMatch(
      /\nHcpCluster\/stuck\s+False\s+Info\s+Deleting\s+\S+\s+Waiting for 1 node pool\(s\) to be deleted: held\n/,
    );
    expect(text.stdout).toMatch(
      /\n├─Deleting\s+Info\s+Finalizers\s+\S+\s+finalizers: hcp\.aro\.dev\/cluster\n/,
    );
    expect(text.stdout).toMatch(
      /\n├─Blocked by NodePool\/held\s+Warning\s+being deleted; finalizers example\.com\/hold\n/,
    );
    expect(text.stdout).toMatch(
      /\n│ {3}└─Blocked by Finalizer\/example\.com\/hold\s+Warning\s+no controller of this service removes it\n/,
    );

    const json = JSON.parse(
      (await hcpctl("describe", "cluster", "stuck", "-n", ns, "-o", "json")).stdout,
    ) as ClusterTree;
    expect(json.root.deletion?.blockedBy).toEqual([
      { kind: "NodePool", name: "held", namespace: ns, why: "being deleted; finalizers example.com/hold" },
    ]);
    expect(child(child(json.root, "", "NodePools"), "NodePool", "held").deletion?.blockedBy).toEqual([
      { kind: "Finalizer", name: HOLD, why: "no controller of this service removes it" },
    ]);

    const watch = start(kubectlPath(), ["hcp", "describe", "cluster", "stuck", "-n", ns, "--watch"]);
    const waiter = start("hcpctl", [
      "wait",
      "cluster",
      "stuck",
      "-n",
      ns,
      "--for",
      "delete",
      "--timeout",
      "60s",
    ]);
    await eventually(
      "the first tree drawn",
      () => watch.output().includes("Blocked by NodePool/held"),
      20_000,
    );
    await service.mergePatch(
      NodePoolResource,
      { name: "held", namespace: ns },
      { metadata: { finalizers: null } },
    );

    expect(await waiter.exited).toMatchObject({ code: 0, stdout: "hcpcluster.hcp.aro.dev/stuck deleted\n" });
    const watched = await watch.exited;
    expect(watched.code).toBe(0);
    expect(watched.stderr).toBe(`hcpcluster "stuck" not found in namespace "${ns}": it was deleted\n`);
    const trees = watched.stdout.split(/\n(?=NAME\s+READY)/);
    expect(trees.length).toBeGreaterThan(1);
    expect(trees.at(-1)).not.toContain("Blocked by NodePool/held");
  });
});
