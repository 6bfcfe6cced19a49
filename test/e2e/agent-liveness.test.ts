/**
 * A management cluster's agent stops: within the bound its ManagementCluster shows Connected=False
 * and the Ready cluster and node pool placed there show Ready=Unknown (StatusStale), in their
 * status, in the region monitor's gauges, through the real `kubectl` (the CRDs' printer columns and
 * `-o json`) and through `hcpctl` (tables and `-o json`); when the agent starts again all of
 * it returns to what the feedback says. The agents beat every 500 ms, so the bound is 1.5 s (three
 * missed beats; 30 s with the default 10 s) and the test needs no long waits. Every step waits
 * for evidence in the objects or in a command's output.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  ManagementClusterResource,
  NodePoolResource,
  type HcpCluster,
  type ManagementCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import { certificateSummary } from "../../operators/maestro-agent/broker-credentials.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { gaugeValue } from "../support/metrics.ts";
import type { ClusterTree } from "../../operators/hcpctl/model.ts";
import { brokerCredentials, clusterInfo, kubectlPath } from "../support/region.ts";
import { sampleCluster, sampleFixedPool } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const exec = promisify(execFile);
const hcpctlBin = fileURLToPath(new URL("../../operators/hcpctl/hcpctl.ts", import.meta.url));
const HEARTBEAT_MS = 500;
const BOUND_MS = 3 * HEARTBEAT_MS;
/** The bound, a reconcile and two status writes, with room for a busy two-core machine. */
const SHOWN_MS = 15_000;
const READY_MS = 60_000;

const service = clientFor("service");
const ns = `liveness-${process.pid}`;
let running: TestStack | undefined;

const cond = (
  o: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined => o?.status?.conditions?.find((c) => c.type === type);
const getCluster = () => service.find<HcpCluster>(HcpClusterResource, "c1", ns);
const getPool = () => service.find<NodePool>(NodePoolResource, "p1", ns);
const getMc = (name: string) => service.find<ManagementCluster>(ManagementClusterResource, name);

const env = (): NodeJS.ProcessEnv => ({
  ...process.env,
  KUBECONFIG: clusterInfo("service").kubeconfigPath,
  NO_COLOR: "1",
});

async function hcpctl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [hcpctlBin, ...args], { env: env(), timeout: 60_000 });
}

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(kubectlPath(), args, { env: env(), timeout: 60_000 });
}

beforeAll(async () => {
  running = await startTestStack("liveness", {
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    agentHeartbeatMs: HEARTBEAT_MS,
  });
  await service.create(namespaceType, { metadata: { name: ns } });
  const c = sampleCluster();
  c.metadata = { name: "c1", namespace: ns };
  c.spec.dns.baseDomainPrefix = `live${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `liveness-${process.pid}`;
  delete c.spec.placement;
  await service.create(HcpClusterResource, c);
  const p = sampleFixedPool();
  p.metadata = { name: "p1", namespace: ns };
  p.spec.clusterRef.name = "c1";
  await service.create(NodePoolResource, p);
  await eventually(
    "the cluster and its pool Ready",
    async () =>
      cond(await getCluster(), "Ready")?.status === "True" &&
      cond(await getPool(), "Ready")?.status === "True",
    READY_MS,
  );
}, 150_000);

afterAll(async () => {
  // Deleted through the controllers (nothing left in Azure or on the management cluster) before they stop.
  await service.delete(HcpClusterResource, { name: "c1", namespace: ns }).catch(() => undefined);
  await eventually("the cluster deleted", async () => (await getCluster()) === undefined, READY_MS).catch(
    () => undefined,
  );
  await running?.stop();
  await service.delete(namespaceType, { name: ns }).catch(() => undefined);
}, 90_000);

describe("a management cluster whose agent stops", () => {
  it("shows Connected=False and its cluster and pool StatusStale within the bound, and all of it returns with the agent", async () => {
    const placed = (await getCluster())!.status!.managementCluster!;
    const other = placed === "mgmt-1" ? "mgmt-2" : "mgmt-1";
    await eventually(
      "both agents Connected at the test's heartbeat",
      async () =>
        [await getMc(placed), await getMc(other)].every(
          (mc) =>
            cond(mc, "Connected")?.status === "True" &&
            mc?.status?.agent?.heartbeatSeconds === HEARTBEAT_MS / 1000,
        ),
      SHOWN_MS,
    );
    // Each shows the broker certificate its agent connects with, as the agent's heartbeat reports it.
    for (const name of [placed, other]) {
      const pem = await readFile((await brokerCredentials(name)).certPath, "utf8");
      expect((await getMc(name))?.status?.agent?.brokerCertificate).toEqual(certificateSummary(pem));
    }

    const stopped = Date.now();
    await running!.stack.stopAgent(placed);
    await eventually(
      "the management cluster not Connected, the cluster and the pool StatusStale",
      async () => {
        const [mc, c, p] = await Promise.all([getMc(placed), getCluster(), getPool()]);
        return (
          cond(mc, "Connected")?.status === "False" &&
          cond(c, "Ready")?.reason === "StatusStale" &&
          cond(p, "Ready")?.reason === "StatusStale"
        );
      },
      SHOWN_MS,
    );
    const shownAfterMs = Date.now() - stopped;
    expect(shownAfterMs).toBeGreaterThanOrEqual(BOUND_MS - HEARTBEAT_MS);
    expect(shownAfterMs).toBeLessThan(SHOWN_MS);

    const mc = (await getMc(placed))!;
    expect(mc.status).toMatchObject({ phase: "Unavailable", agent: { heartbeatSeconds: 0.5 } });
    expect(cond(mc, "Connected")).toMatchObject({ reason: "AgentNotHeard" });
    expect(cond(mc, "Connected")?.message).toMatch(
      /^No heartbeat from the agent for more than 1\.5s \(3 intervals of 0\.5s\); last heard at /,
    );
    const ready = cond(await getCluster(), "Ready")!;
    expect(ready).toMatchObject({ status: "Unknown" });
    expect(ready.message).toContain(
      `No status from management cluster ${placed} since ${mc.status!.agent!.lastHeardTime!}`,
    );
    expect(ready.message).toMatch(/last reported Ready True, AsExpected: The cluster is ready on mgmt-\d$/);
    expect((await getCluster())!.status!.phase).toBe("Ready");
    expect(cond(await getPool(), "Ready")).toMatchObject({ status: "Unknown" });
    expect(cond(await getMc(other), "Connected")?.status).toBe("True");

    expect(await gaugeValue("hcp_status_stale", { kind: "HcpCluster" })).toBeGreaterThanOrEqual(1);
    expect(await gaugeValue("hcp_status_stale", { kind: "NodePool" })).toBeGreaterThanOrEqual(1);
    expect(
      await gaugeValue("hcp_managementcluster_connected", { management_cluster: placed, status: "False" }),
    ).toBe(1);
    expect(
      await gaugeValue("hcp_managementcluster_connected", { management_cluster: other, status: "True" }),
    ).toBe(1);
    expect(
      await gaugeValue("hcp_managementcluster_agent_last_heard_seconds", { management_cluster: placed }),
    ).toBeGreaterThanOrEqual(BOUND_MS / 1000);

    const stale = await hcpctl("get", "clusters", "-n", ns, "--stale", "-o", "wide");
    expect(stale.stdout).toMatch(
      /\nc1\s+4\.19\.7\s+Ready\s+Unknown\s+mgmt-\d\s+\S+\s+StatusStale\s+.*Ready StatusStale for \d+s\n/,
    );
    const mcs = await hcpctl("get", "managementclusters");
    expect(mcs.stdout.split("\n")[0]).toMatch(
      /^NAME\s+CONSUMER\s+PHASE\s+SCHEDULABLE\s+LOAD\s+CONNECTED\s+LAST HEARD\s+AGE$/,
    );
    expect(mcs.stdout).toMatch(
      new RegExp(`\\n${placed}\\s+${placed}\\s+Unavailable\\s+true\\s+\\d+/\\d+\\s+False\\s+\\d+s\\s+`),
    );
    expect(mcs.stdout).toMatch(
      new RegExp(`\\n${other}\\s+${other}\\s+\\w+\\s+true\\s+\\d+/\\d+\\s+True\\s+`),
    );
    const columns = await kubectl("get", "hcpclusters", "c1", "-n", ns);
    expect(columns.stdout).toMatch(/\nc1\s+4\.19\.7\s+Ready\s+Unknown\s+mgmt-\d\s+https:\/\/\S+\s+\S+\n$/);
    const asJson = JSON.parse(
      (await kubectl("get", "hcpclusters", "c1", "-n", ns, "-o", "json")).stdout,
    ) as HcpCluster;
    expect(cond(asJson, "Ready")).toMatchObject({ status: "Unknown", reason: "StatusStale" });
    const mcColumns = await kubectl("get", "managementclusters", placed, "-o", "wide");
    expect(mcColumns.stdout).toMatch(
      new RegExp(
        // The last heard, the broker certificate's expiry (RFC 3339), the phase, the age.
        `\\n${placed}\\s+${placed}\\s+true\\s+\\d+\\s+\\d+\\s+False\\s+\\S+\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+Unavailable\\s+\\S+\\n$`,
      ),
    );
    const staleJson = JSON.parse(
      (await hcpctl("get", "clusters", "-n", ns, "--stale", "-o", "json")).stdout,
    ) as {
      items: HcpCluster[];
    };
    expect(staleJson.items.map((c) => [c.metadata.name, cond(c, "Ready")?.reason])).toEqual([
      ["c1", "StatusStale"],
    ]);
    const treeJson = JSON.parse(
      (await hcpctl("describe", "cluster", "c1", "-n", ns, "-o", "json")).stdout,
    ) as ClusterTree;
    expect(treeJson.root.summary).toMatchObject({ ready: "Unknown", reason: "StatusStale" });
    expect(treeJson.root.children.find((n) => n.kind === "ManagementCluster")?.summary).toMatchObject({
      ready: "False",
      reason: "AgentNotHeard",
    });

    const tree = await hcpctl("describe", "cluster", "c1", "-n", ns);
    expect(tree.stdout).toMatch(
      /\nHcpCluster\/c1\s+Unknown\s+Warning\s+StatusStale\s+\S+\s+No status from management cluster /,
    );
    expect(tree.stdout).toMatch(
      new RegExp(
        `\\n├─ManagementCluster/${placed}\\s+False\\s+Warning\\s+AgentNotHeard\\s+\\S+\\s+No heartbeat`,
      ),
    );

    running!.stack.startAgent(placed);
    await eventually(
      "the agent Connected again, the cluster and the pool Ready as the feedback says",
      async () => {
        const [m, c, p] = await Promise.all([getMc(placed), getCluster(), getPool()]);
        return (
          cond(m, "Connected")?.status === "True" &&
          cond(c, "Ready")?.reason === "AsExpected" &&
          cond(p, "Ready")?.reason === "AsExpected"
        );
      },
      SHOWN_MS,
    );
    expect(cond(await getCluster(), "Ready")?.status).toBe("True");
    expect((await getMc(placed))!.status!.phase).not.toBe("Unavailable");
    const none = await hcpctl("get", "clusters", "-n", ns, "--stale");
    expect(none).toEqual({ stdout: "", stderr: `No resources found in ${ns} namespace.\n` });
    const back = JSON.parse(
      (await kubectl("get", "hcpclusters", "c1", "-n", ns, "-o", "json")).stdout,
    ) as HcpCluster;
    expect(cond(back, "Ready")).toMatchObject({ status: "True", reason: "AsExpected" });
    expect(
      JSON.parse((await hcpctl("get", "clusters", "-n", ns, "--stale", "-o", "json")).stdout) as {
        items: [];
      },
    ).toMatchObject({ items: [] });
    expect(
      await gaugeValue("hcp_managementcluster_connected", { management_cluster: placed, status: "True" }),
    ).toBe(1);
  });
});
