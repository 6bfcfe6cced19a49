/**
 * hcpctl against the local region, as an SRE runs it: the real `kubectl` with `kubectl-hcp` on
 * PATH (`kubectl hcp …`) and the `hcpctl` bin, both reading the service cluster only. One cluster
 * reaches Ready (and is told in two events); one is made Degraded by HyperShift (the simulator's
 * failure annotation on its HostedCluster); another is deleted while its node pool carries a
 * finalizer no controller here owns, so its deletion stays blocked until the test lifts the
 * finalizer; a fourth is created through the ARM frontend with a known correlation id, traced,
 * and found on every log line about it. (A cluster whose agent stops: agent-liveness.test.ts.)
 * Every step waits for evidence in the objects' status or in the command's output.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual, promisify } from "node:util";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAIL_ANNOTATION } from "../../hack/hypershift-simulator/release.ts";
import { HostedClusterResource } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import {
  clusterCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import type { GatherIndex } from "../../operators/hcpctl/gather.ts";
import type { ClusterTree, TreeNode } from "../../operators/hcpctl/model.ts";
import type { RequestTrace } from "../../operators/hcpctl/trace.ts";
import { CLUSTER_CONTROLLER } from "../../operators/cluster/controller.ts";
import { SERVER_NAME } from "../../operators/maestro-server/controller.ts";
import { NODE_POOL_CONTROLLER } from "../../operators/nodepool/controller.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { createLogger } from "../../operators/runtime/logger.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "../support/fixtures.ts";
import { clusterBody, clusterPath, nodePoolBody, nodePoolPath } from "../support/frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "../support/frontend-fixture.ts";
import { clusterInfo, kubectlPath } from "../support/region.ts";
import { sampleCluster, sampleFixedPool } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const exec = promisify(execFile);
const bins = fileURLToPath(new URL("../../operators/hcpctl/", import.meta.url));
const HOLD = "example.com/hold";
const READY_MS = 60_000;
/** The region's pull secret, with a token no other file of the test has: must-gather must not leak it. */
const PULL_TOKEN = randomBytes(24).toString("hex");
const PULL_SECRET = JSON.stringify({ auths: { "registry.example.com": { auth: PULL_TOKEN } } });
const base64 = (text: string): string => Buffer.from(text).toString("base64");

const service = clientFor("service");
const ns = `sre-${process.pid}`;
let running: TestStack | undefined;
let scratch: { path: string; remove(): Promise<void> };
let env: NodeJS.ProcessEnv;
let frontend: FrontendFixture | undefined;
const sub = randomUUID();
/** Every log line the region's components and the frontend wrote, debug included. */
const logLines: string[] = [];
const log = createLogger({}, "debug", (line) => void logLines.push(line));
/** Every phase the Ready cluster's status was written with while it was created (a watch sees each write). */
const installPhases = new Set<string>();

/** Records the phases of HcpCluster `name` until the signal aborts. */
async function recordPhases(name: string, signal: AbortSignal): Promise<void> {
  const watch = service.watch<HcpCluster>(HcpClusterResource, {
    namespace: ns,
    fieldSelector: `metadata.name=${name}`,
    signal,
  });
  try {
    for await (const e of watch) if (e.object.status?.phase) installPhases.add(e.object.status.phase);
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

interface CoreEvent extends KubeObject {
  involvedObject: { kind: string; name: string };
  type: string;
  reason: string;
  message: string;
  count: number;
}

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
  running = await startTestStack("hcpctl", {
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    region: { pullSecret: PULL_SECRET },
    log,
  });
  await service.create(namespaceType, { metadata: { name: ns } });
  const watching = new AbortController();
  const phases = recordPhases("ready", watching.signal);
  for (const name of ["ready", "sick", "stuck"]) await service.create(HcpClusterResource, cluster(name));
  await service.create(NodePoolResource, pool("workers", "ready"));
  await service.create(NodePoolResource, pool("held", "stuck", [HOLD]));
  await eventually(
    "the clusters and their pools Ready",
    async () => {
      const objs = await Promise.all([
        getCluster("ready"),
        getCluster("sick"),
        getCluster("stuck"),
        getPool("workers"),
        getPool("held"),
      ]);
      return objs.every((o) => cond(o, "Ready")?.status === "True");
    },
    READY_MS,
  );
  watching.abort();
  await phases;
  frontend = await startFrontendFixture({
    client: service,
    name: "hcpctl-frontend",
    catalogNamespace: running.stack.namespace,
    log: log.child({ component: "hcp-frontend" }),
  });
  expect((await frontend.putSubscription(sub, "Registered")).status).toBe(200);
}, 150_000);

afterAll(async () => {
  await service
    .mergePatch(NodePoolResource, { name: "held", namespace: ns }, { metadata: { finalizers: null } })
    .catch(() => undefined);
  await frontend?.stop();
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
      ["sick", "Ready"],
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

  it("tells a fresh create in one event per object: Ready", async () => {
    const c = (await getCluster("ready"))!;
    const placed = c.status!.managementCluster!;
    const events = (await service.list<CoreEvent>(eventType, { namespace: ns })).items;
    const of = (kind: string, name: string) =>
      events
        .filter((e) => e.involvedObject.kind === kind && e.involvedObject.name === name)
        .map((e) => [e.type, e.reason, e.message, e.count])
        .sort();
    // No "Upgrading" (a first install is no upgrade), no Placed, no work created, no Progressing
    // echo: the steps are in the conditions; one event per transition a user needs, each once.
    expect(of("HcpCluster", "ready")).toEqual([["Normal", "Ready", `The cluster is ready on ${placed}`, 1]]);
    expect(of("NodePool", "workers")).toEqual([["Normal", "Ready", "The nodes are ready", 1]]);
    const workEvents = (await service.list<CoreEvent>(eventType, { namespace: placed })).items.filter((e) =>
      e.involvedObject.name.startsWith(c.metadata.uid!),
    );
    expect(workEvents).toEqual([]);
    // A first install is Provisioning until it is Ready, never Updating.
    expect([...installPhases]).toEqual(expect.arrayContaining(["Provisioning", "Ready"]));
    expect(installPhases.has("Updating")).toBe(false);
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

  it("shows a cluster HyperShift calls Degraded: kubectl's columns, the tree with HyperShift's reason, the JSON", async () => {
    const c = (await getCluster("sick"))!;
    const prefix = c.spec.dns.baseDomainPrefix;
    const mgmt = clientFor(c.status!.managementCluster!);
    await mgmt.mergePatch(
      HostedClusterResource,
      { name: prefix, namespace: c.status!.hostedClusterNamespace! },
      { metadata: { annotations: { [FAIL_ANNOTATION]: "EtcdQuorumLost: etcd lost quorum" } } },
    );
    await eventually(
      "the cluster Degraded",
      async () => cond(await getCluster("sick"), "Degraded")?.status === "True",
      READY_MS,
    );

    const columns = await sh(kubectlPath(), ["get", "hcpclusters", "sick", "-n", ns]);
    expect(columns.stderr).toBe("");
    expect(columns.stdout).toMatch(
      /^NAME\s+VERSION\s+PHASE\s+READY\s+MANAGEMENT CLUSTER\s+API URL\s+AGE\nsick\s+4\.19\.7\s+Degraded\s+False\s+mgmt-[12]\s+https:\/\/api\.\S+:443\s+\S+\n$/,
    );
    const wide = await kubectlHcp("get", "clusters", "-n", ns, "--phase", "Degraded", "-o", "wide");
    expect(wide.stdout).toMatch(/^NAME\s+VERSION\s+PHASE\s+READY\s+MANAGEMENT CLUSTER\s+AGE\s+REASON\s+/);
    expect(wide.stdout).toMatch(
      /\nsick\s+4\.19\.7\s+Degraded\s+False\s+mgmt-[12]\s+\S+\s+HostedClusterEtcdQuorumLost\s+/,
    );
    expect(wide.stdout.split("\n").filter(Boolean)).toHaveLength(2);

    const text = await kubectlHcp("describe", "cluster", "sick", "-n", ns);
    expect(text.stdout).toMatch(
      new RegExp(
        `\\nHcpCluster/sick\\s+False\\s+Error\\s+HostedClusterEtcdQuorumLost\\s+\\S+\\s+HostedClusterAvailable: etcd lost quorum\\n`,
      ),
    );
    expect(text.stdout).toMatch(
      new RegExp(`HostedCluster/${prefix}\\s+False\\s+Error\\s+EtcdQuorumLost\\s+\\S+\\s+etcd lost quorum`),
    );

    const tree = JSON.parse(
      (await hcpctl("describe", "cluster", "sick", "-n", ns, "-o", "json")).stdout,
    ) as ClusterTree;
    expect(tree.root.summary).toMatchObject({ ready: "False", reason: "HostedClusterEtcdQuorumLost" });
    expect(tree.root.conditions.find((x) => x.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "HostedClusterEtcdQuorumLost",
      message: `HostedCluster ${c.status!.hostedClusterNamespace!}/${prefix} is degraded: etcd lost quorum`,
    });
    const work = child(
      child(tree.root, "ManagementCluster", c.status!.managementCluster),
      "ManifestWork",
      c.metadata.uid,
    );
    expect(child(work, "HostedCluster", prefix).conditions.find((x) => x.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "EtcdQuorumLost",
      message: "etcd lost quorum",
    });
    const degradedJson = JSON.parse(
      (await hcpctl("get", "clusters", "-n", ns, "--phase", "Degraded", "-o", "json")).stdout,
    ) as { items: HcpCluster[] };
    expect(degradedJson.items.map((x) => [x.metadata.name, x.status?.phase])).toEqual([["sick", "Degraded"]]);

    // One event for the transition, a Warning with HyperShift's words: not one more each for Ready
    // and the HostedClusterAvailable step, which turned False for the same cause.
    const degradedEvents = (await service.list<CoreEvent>(eventType, { namespace: ns })).items.filter(
      (e) => e.involvedObject.name === "sick" && e.reason === "HostedClusterEtcdQuorumLost",
    );
    expect(degradedEvents.map((e) => [e.type, e.message, e.count])).toEqual([
      [
        "Warning",
        `HostedCluster ${c.status!.hostedClusterNamespace!}/${prefix} is degraded: etcd lost quorum`,
        1,
      ],
    ]);

    await mgmt.mergePatch(
      HostedClusterResource,
      { name: prefix, namespace: c.status!.hostedClusterNamespace! },
      { metadata: { annotations: { [FAIL_ANNOTATION]: null } } },
    );
    await eventually(
      "the cluster Ready again",
      async () => cond(await getCluster("sick"), "Ready")?.status === "True",
      READY_MS,
    );
    // Its whole story in events: Ready, the Warning, Recovered and Ready again (counted).
    const story = async () =>
      (await service.list<CoreEvent>(eventType, { namespace: ns })).items
        .filter((e) => e.involvedObject.kind === "HcpCluster" && e.involvedObject.name === "sick")
        .map((e) => [e.type, e.reason, e.count])
        .sort();
    await eventually("the recovery recorded", async () => (await story()).some((e) => e[1] === "Recovered"));
    expect(await story()).toEqual([
      ["Normal", "Ready", 2],
      ["Normal", "Recovered", 1],
      ["Warning", "HostedClusterEtcdQuorumLost", 1],
    ]);
    expect((await kubectlHcp("get", "clusters", "-n", ns, "--phase", "Degraded")).stderr).toBe(
      `No resources found in ${ns} namespace.\n`,
    );
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

  it("traces a cluster and its node pool created through the ARM frontend, hop by hop", async () => {
    const arm = frontend!.arm;
    const rg = "HCPCTL-E2E";
    const correlation = `hcpctl-trace-${randomUUID()}`;
    const [clusterClient, poolClient] = [randomUUID(), randomUUID()];
    const prefix = `tr${process.pid % 100000}`;
    const put = await arm.send("PUT", clusterPath(sub, rg, "Trace-Me"), {
      body: clusterBody(sub, { prefix }),
      headers: { "x-ms-correlation-request-id": correlation, "x-ms-client-request-id": clusterClient },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect((await arm.poll(put.headers["azure-asyncoperation"]!, 90_000, 250)).status).toBe("Succeeded");
    // An ARM deployment sends one correlation id with every resource it writes.
    const putPool = await arm.send("PUT", nodePoolPath(sub, rg, "Trace-Me", "Workers"), {
      body: nodePoolBody({ replicas: 1 }),
      headers: { "x-ms-correlation-request-id": correlation, "x-ms-client-request-id": poolClient },
    });
    expect(putPool.status, JSON.stringify(putPool.body)).toBe(201);
    expect((await arm.poll(putPool.headers["azure-asyncoperation"]!, 90_000, 250)).status).toBe("Succeeded");
    const crName = clusterCRName(rg, "Trace-Me");
    const cr = await service.get<HcpCluster>(HcpClusterResource, crName, subscriptionNamespace(sub));

    const json = await kubectlHcp("trace", correlation, "-o", "json");
    expect(json.stderr).toBe("");
    const trace = JSON.parse(json.stdout) as RequestTrace;
    expect(trace).toMatchObject({ kind: "RequestTrace", id: correlation });
    expect(trace.operations.map((o) => [o.target.kind, o.target.name, o.operation.request])).toEqual([
      ["HcpCluster", crName, "Create"],
      ["NodePool", nodePoolCRName(rg, "Trace-Me", "Workers"), "Create"],
    ]);
    const [clusterOp, poolOp] = trace.operations;
    const hops = ["Accepted", "Written", "Observed", "Published", "Applied", "Reported", "Result"];
    for (const op of [clusterOp!, poolOp!]) {
      expect(op.hops.map((h) => [h.hop, h.state])).toEqual(hops.map((h) => [h, "Done"]));
      // Every hop has its time, each after the request came, in the order of the hops.
      const seconds = op.hops.map((h) => Math.floor(Date.parse(h.time!) / 1000));
      expect(seconds.every((t) => t >= seconds[0]!)).toBe(true);
      expect(op.hops.slice(1).map((h) => h.sincePreviousSeconds)).toEqual(
        seconds.slice(1).map((t, i) => t - seconds[i]!),
      );
      expect(op.hops.at(-1)!.message).toBe("Succeeded");
    }
    expect(clusterOp!.matchedBy).toBe("correlationRequestId");
    expect(clusterOp!.hops.find((h) => h.hop === "Written")).toMatchObject({
      time: cr.metadata.creationTimestamp,
      message: "generation 1",
    });
    expect(clusterOp!.hops.find((h) => h.hop === "Published")).toMatchObject({
      object: { kind: "ManifestWork", namespace: cr.status!.managementCluster, name: cr.metadata.uid },
      message: `generation 1 sent to ${cr.status!.managementCluster!}`,
    });
    expect(clusterOp!.hops.find((h) => h.hop === "Reported")).toMatchObject({
      object: { kind: "HostedCluster", name: prefix },
      message: expect.stringMatching(/^Available True; HostedCluster generation \d+, version 4\.19\.7$/),
    });
    expect(poolOp!.hops.find((h) => h.hop === "Reported")?.object).toMatchObject({ kind: "NodePool" });

    const text = await hcpctl("trace", correlation);
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[0]).toBe(
      `Operation ${clusterOp!.operation.id}: Create of ${clusterPath(sub, rg, "Trace-Me")}`,
    );
    expect(lines[2]).toMatch(/^HOP\s+STATE\s+TIME\s+\+PREV\s+OBJECT\s+MESSAGE$/);
    for (const [i, hop] of hops.entries())
      expect(lines[3 + i]).toMatch(new RegExp(`^${hop}\\s+Done\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+`));
    expect(text.stdout).toContain(
      `\nOperation ${poolOp!.operation.id}: Create of ${nodePoolPath(sub, rg, "Trace-Me", "Workers")}\n`,
    );

    const byClient = JSON.parse((await hcpctl("trace", poolClient, "-o", "json")).stdout) as RequestTrace;
    expect(byClient.operations.map((o) => [o.target.kind, o.matchedBy])).toEqual([
      ["NodePool", "clientRequestId"],
    ]);

    // The same id is on every log line about the request, from the frontend to the agent (but the
    // runtime's "Reconciling", written from the queue's key before the object is read).
    const placed = cr.status!.managementCluster!;
    const work = await service.get<ManifestWork>(ManifestWorkResource, cr.metadata.uid!, placed);
    const poolCR = nodePoolCRName(rg, "Trace-Me", "Workers");
    const logged = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const about = logged.filter(
      (l) =>
        l["msg"] !== "Reconciling" &&
        ((l["controller"] === CLUSTER_CONTROLLER && l["name"] === crName) ||
          (l["controller"] === NODE_POOL_CONTROLLER && l["name"] === poolCR) ||
          (l["controller"] === SERVER_NAME && l["name"] === work.metadata.name) ||
          (l["component"] === "maestro-agent" && l["name"] === work.metadata.uid)),
    );
    expect(new Set(about.map((l) => l["controller"]))).toEqual(
      new Set([CLUSTER_CONTROLLER, NODE_POOL_CONTROLLER, SERVER_NAME, `maestro-agent-${placed}`]),
    );
    for (const l of about) expect(l, JSON.stringify(l)).toMatchObject({ correlationRequestId: correlation });
    const frontendLines = logged.filter(
      (l) => l["component"] === "hcp-frontend" && l["correlationRequestId"] === correlation,
    );
    expect(new Set(frontendLines.map((l) => l["clientRequestId"]))).toEqual(
      new Set([clusterClient, poolClient]),
    );

    expect(await hcpctl("trace", "no-such-request")).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'error: no ARM request with correlation or client request id "no-such-request": no HcpCluster, NodePool or operation record in any namespace carries it (operation records are kept 7 days)\n',
    });
  }, 240_000);

  it("gathers a cluster into a directory with no secret in it, and describes it from there as it was live", async () => {
    const dir = join(scratch.path, "gather-ready");
    const norm = (text: string): string =>
      text
        .split("\n")
        .map((line) => line.replace(/\b\d+(?:[ydhms]\d*)+\b/g, "AGE").replace(/\s+/g, " "))
        .join("\n");
    const live = () => kubectlHcp("describe", "cluster", "ready", "-n", ns, "--show-conditions", "all");
    const tree = async (...from: string[]): Promise<ClusterTree> =>
      JSON.parse((await hcpctl("describe", "cluster", "ready", ...from, "-o", "json")).stdout) as ClusterTree;
    // A gather taken while nothing changed: the tree drawn before it and after it are the same, and
    // so is the JSON tree read live right after (the management cluster's placed count is
    // refreshed on its own, every 10 s, and may move between the two).
    let before = "";
    let liveTree: ClusterTree | undefined;
    await eventually(
      "a gather the live tree did not change around",
      async () => {
        before = (await live()).stdout;
        const gathered = await hcpctl("must-gather", "ready", "-n", ns, "-o", dir, "--force");
        expect(gathered.stderr).toBe("");
        expect(gathered.stdout).toMatch(
          new RegExp(`^wrote \\d+ files and index\\.yaml to ${dir} \\(\\d+ secret values? redacted\\)\\n$`),
        );
        if (norm((await live()).stdout) !== norm(before)) return false;
        liveTree = await tree("-n", ns);
        return isDeepStrictEqual((await tree("--from", dir)).root, liveTree.root);
      },
      READY_MS,
    );
    const offline = await hcpctl("describe", "cluster", "ready", "--from", dir, "--show-conditions", "all");
    expect(offline.stderr).toBe("");
    expect(norm(offline.stdout)).toBe(norm(before));
    expect(offline.stdout).toMatch(/\nHcpCluster\/ready\s+True\s+AsExpected\s+/);
    expect((await tree("--from", dir)).root).toEqual(liveTree?.root);

    // Every file is in the index, and the pull secret and signing key the work carries are in none of them.
    const index = load(await readFile(join(dir, "index.yaml"), "utf8")) as GatherIndex;
    const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => relative(dir, join(e.parentPath, e.name)));
    expect(files.filter((f) => f !== "index.yaml").sort()).toEqual(index.files.map((f) => f.path).sort());
    expect(index.files.map((f) => f.role)).toEqual(
      expect.arrayContaining(["HcpCluster", "NodePool", "ManagementCluster", "ManifestWork", "Events"]),
    );
    const c = (await getCluster("ready"))!;
    const work = await service.get<ManifestWork>(
      ManifestWorkResource,
      c.metadata.uid!,
      c.status!.managementCluster,
    );
    const secret = work.spec!.workload!.manifests!.find((m) => m.kind === "Secret")!;
    expect((secret["data"] as Record<string, string>)[".dockerconfigjson"]).toBe(base64(PULL_SECRET));
    const signing = work.spec!.workload!.manifests!.find((m) => m.metadata?.name === "sa-signing-key")!;
    const signingKey = (signing["data"] as Record<string, string>)["key"]!;
    expect(
      index.files.find((f) => f.role === "ManifestWork" && f.path.endsWith(`/${c.metadata.uid!}.yaml`))
        ?.redacted,
    ).toEqual([
      '.spec.workload.manifests[1].data[".dockerconfigjson"]',
      ".spec.workload.manifests[2].data.key",
    ]);
    for (const f of files) {
      const content = await readFile(join(dir, f), "utf8");
      for (const leak of [PULL_TOKEN, base64(PULL_SECRET), base64(PULL_TOKEN), PULL_SECRET])
        expect(content.includes(leak), `${f} holds the pull secret`).toBe(false);
      expect(content.includes(signingKey), `${f} holds the signing key`).toBe(false);
    }

    await writeFile(join(dir, "notes.txt"), "mine");
    const refused = await hcpctl("must-gather", "ready", "-n", ns, "-o", dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^error: -o ${dir}: the directory is not empty \\(\\d+ entries, e\\.g\\. \\S+\\): name a new or empty one, or pass --force to write into it\\n$`,
      ),
    );
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
