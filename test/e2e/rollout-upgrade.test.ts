/**
 * A fleet release rollout end to end on the local region (issue 33): four clusters made through the
 * cluster controller, the agents and the HyperShift simulator; three run 4.19.7 and one 4.17.40,
 * two minors behind 4.19.10. `hcpctl rollout start --urgent` rolls 4.19.10 over them with the real UpgradeControlPlane: the canary's
 * spec.version.id is raised (annotated with the run and the id it replaced), its HostedCluster gets
 * the 4.19.10 image and the control plane runs it; the 4.17.40 cluster in wave 2 fails in
 * CheckUpgradePath, naming the reason and its version, and the rollout pauses itself with the last
 * cluster untouched; `hcpctl rollout status` names the failed cluster; `resume` takes the rest
 * to 4.19.10 and the rollout to Succeeded.
 *
 * Not in vitest.config.ts's AdmissionFirstSequencer list: nothing here needs the update-graph
 * policy to refuse. The failing cluster is refused by the run's own plan before any write; the
 * policy only has to let 4.19.7 → 4.19.10 through, which it does whether or not it refuses.
 * Every step waits for evidence in the objects or the command's output.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  HcpClusterResource,
  MAINTENANCE_VERSION_ANNOTATIONS,
  MaintenanceRunResource,
  RolloutResource,
  type HcpCluster,
  type MaintenanceRun,
  type Rollout,
} from "../../operators/api/v1alpha1/index.ts";
import { CATALOG_CONFIGMAP, CATALOG_KEY, configMapType } from "../../operators/releases/catalog.ts";
import { GRAPH_PARAMS_CONFIGMAP, paramKey } from "../../operators/releases/graph-params.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { clusterInfo } from "../support/region.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const LIFECYCLE_MS = 90_000;
const service = clientFor("service");
const customer = `rollout-upgrade-${process.pid}`;
const fleet = `ru-${process.pid}`;
const name = `ru-${process.pid}`;

/**
 * Sorted by name, which is the rollout's order: canary 1, growth 2 puts `a-canary` in wave 1,
 * `b-behind` (two minors behind the target) and `b-ok` in wave 2, `c-later` in wave 3.
 */
const CANARY = "a-canary";
const BEHIND = "b-behind";
const WAVE_2_OK = "b-ok";
const LATER = "c-later";
const VERSIONS: Record<string, string> = {
  [CANARY]: "4.19.7",
  [BEHIND]: "4.17.40",
  [WAVE_2_OK]: "4.19.7",
  [LATER]: "4.19.7",
};

const release = (v: string, extra = ""): string =>
  `  - {version: ${v}, image: "quay.io/openshift-release-dev/ocp-release:${v}-multi"${extra}}\n`;
/** 4.19.10 is reached from 4.19.7; from 4.17.40 it would skip a minor. */
const CATALOG = [release("4.17.40"), release("4.19.7"), release("4.19.10", ", upgradesFrom: [4.19.7]")].join(
  "",
);

let running: TestStack | undefined;
let operators = "";

const hcpctl = (...args: string[]) =>
  runHcpctl("--kubeconfig", clusterInfo("service").kubeconfigPath, ...args);
const getCluster = (n: string) => service.find<HcpCluster>(HcpClusterResource, n, customer);
const getRollout = (): Promise<Rollout> => service.get<Rollout>(RolloutResource, name);
const runs = async (): Promise<MaintenanceRun[]> =>
  (await service.list<MaintenanceRun>(MaintenanceRunResource, { namespace: customer })).items;
const runOf = async (cluster: string): Promise<MaintenanceRun | undefined> =>
  (await runs()).find((r) => r.spec.clusterRef.name === cluster);
const cond = (conditions: Condition[] | undefined, type: string): Condition | undefined =>
  conditions?.find((c) => c.type === type);

/** Waits for the rollout to satisfy `predicate`; on a timeout, says where it and its runs stood. */
async function untilRollout(what: string, predicate: (r: Rollout) => boolean, timeoutMs = 60_000) {
  try {
    await eventually(what, async () => predicate(await getRollout()), timeoutMs);
  } catch (err) {
    const stood = (await runs()).map((r) => ({ cluster: r.spec.clusterRef.name, status: r.status }));
    throw new Error(
      `${String(err)}; the rollout's status: ${JSON.stringify((await getRollout()).status)}; its runs: ${JSON.stringify(stood)}`,
      { cause: err },
    );
  }
}

/** The cluster runs `version` and its HostedCluster on the management cluster names its image. */
async function runsOnManagementCluster(cluster: string, version: string): Promise<boolean> {
  const c = await getCluster(cluster);
  if (c?.status?.version !== version || !c.status.managementCluster) return false;
  const hc = await clientFor(c.status.managementCluster).find<HostedCluster>(
    HostedClusterResource,
    c.spec.dns.baseDomainPrefix,
    c.status.hostedClusterNamespace,
  );
  return hc?.spec.release.image.endsWith(`:${version}-multi`) === true;
}

async function readyOn(cluster: string, version: string): Promise<boolean> {
  const c = await getCluster(cluster);
  return (
    cond(c?.status?.conditions, "Ready")?.status === "True" &&
    (await runsOnManagementCluster(cluster, version))
  );
}

function clusterAt(n: string, version: string): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: n, namespace: customer, labels: { fleet } };
  c.spec.version = { id: version, channelGroup: "stable", upgradePolicy: "Manual" };
  c.spec.dns.baseDomainPrefix = `ru${n.replace(/-/g, "")}${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `ru-${n}-${process.pid}-managed`;
  delete c.spec.placement;
  return c;
}

beforeAll(async () => {
  running = await startTestStack("rollout-upgrade", {
    simulator: { provisionDelayMs: 300, deleteDelayMs: 200 },
  });
  operators = running.stack.namespace;
  await service.apply(
    configMapType,
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: CATALOG_CONFIGMAP, namespace: operators },
      data: { [CATALOG_KEY]: `releases:\n${CATALOG}` },
    },
    { fieldManager: "rollout-upgrade-test", force: true },
  );
  // The shipped catalog has no 4.17.40: this refusal exists only once the test's catalog is read.
  await eventually(
    "the release-graph controller's parameters for the test's catalog",
    async () => {
      const cm = await service.find<KubeObject>(configMapType, GRAPH_PARAMS_CONFIGMAP, operators);
      const data = cm?.["data"] as Record<string, string> | undefined;
      return Boolean(data?.[paramKey("stable", "4.17.40", "4.19.10")]);
    },
    30_000,
  );
  await service.create(namespaceType, { metadata: { name: customer } });
  for (const [n, v] of Object.entries(VERSIONS)) await service.create(HcpClusterResource, clusterAt(n, v));
  await eventually(
    "the four clusters Ready on their releases",
    async () => (await Promise.all(Object.entries(VERSIONS).map(([n, v]) => readyOn(n, v)))).every(Boolean),
    LIFECYCLE_MS,
  ).catch(async (err: unknown) => {
    const stood = await Promise.all(
      Object.keys(VERSIONS).map(async (n) => [n, (await getCluster(n))?.status]),
    );
    throw new Error(`${String(err)}; the clusters stood: ${JSON.stringify(stood)}`, { cause: err });
  });
}, 240_000);

afterAll(async () => {
  // Deleted while the controllers run, so that the rollout's, runs' and clusters' finalizers are let
  // go and no later test's controllers find them (the service apiserver is shared).
  await service.delete(RolloutResource, { name }).catch(() => undefined);
  await eventually(
    "the rollout gone",
    async () => !(await service.find(RolloutResource, name)),
    60_000,
  ).catch(() => undefined);
  for (const n of Object.keys(VERSIONS))
    await service.delete(HcpClusterResource, { name: n, namespace: customer }).catch(() => undefined);
  await eventually(
    "the test's clusters and runs gone",
    async () =>
      (await service.list(HcpClusterResource, { namespace: customer })).items.length === 0 &&
      (await runs()).length === 0,
    LIFECYCLE_MS,
  ).catch(() => undefined);
  await running?.stop();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
}, 240_000);

describe("a release rolled over a fleet with UpgradeControlPlane", () => {
  it("starts, upgrades the canary through the cluster controller and pauses itself over wave 2", async () => {
    const started = await hcpctl(
      "rollout",
      "start",
      name,
      "--release",
      "4.19.10",
      "--selector",
      `fleet=${fleet}`,
      "--canary",
      "1",
      "--growth",
      "2",
      "--urgent",
    );
    expect(started.stderr).toBe("");
    expect(started.code).toBe(0);
    await untilRollout(
      "the rollout to pause itself over wave 2",
      (r) => cond(r.status?.conditions, "Paused")?.reason === "FailureBudgetExceeded",
      LIFECYCLE_MS,
    );

    // The canary: raised by its run, the release on the management cluster, the run Succeeded.
    const canaryRun = await runOf(CANARY);
    expect(canaryRun?.spec.task).toBe(`${name}-wave-1`);
    expect(canaryRun?.status?.phase).toBe("Succeeded");
    const canary = await getCluster(CANARY);
    expect(canary?.spec.version.id).toBe("4.19.10");
    expect(canary?.metadata.annotations).toMatchObject({
      [MAINTENANCE_VERSION_ANNOTATIONS.askedBy]: `${customer}/${canaryRun?.metadata.name ?? ""}`,
      [MAINTENANCE_VERSION_ANNOTATIONS.replaced]: "4.19.7",
    });
    expect(await runsOnManagementCluster(CANARY, "4.19.10")).toBe(true);
  }, 120_000);

  it("fails the run of wave 2's cluster two minors behind, naming the reason and its version", async () => {
    const behindRun = await runOf(BEHIND);
    expect(behindRun).toMatchObject({ spec: { task: `${name}-wave-2` }, status: { phase: "Failed" } });
    expect(behindRun?.status?.steps?.find((s) => s.name === "CheckUpgradePath")).toMatchObject({
      state: "Failed",
      message: expect.stringMatching(
        new RegExp(`^UpgradeSkipsMinor: HcpCluster ${customer}/${BEHIND} runs 4\\.17\\.40; .*4\\.19\\.10`),
      ) as unknown,
    });
    // Refused by the plan before any write.
    expect((await getCluster(BEHIND))?.spec.version.id).toBe("4.17.40");

    const status = (await getRollout()).status ?? {};
    expect(cond(status.conditions, "Paused")?.message).toContain(`${customer}/${BEHIND}`);
    expect(status.waves).toEqual([
      expect.objectContaining({ index: 1, clusters: 1, state: "Succeeded" }),
      expect.objectContaining({
        index: 2,
        clusters: 2,
        state: "FailureBudgetExceeded",
        failedClusters: [`${customer}/${BEHIND}`],
      }),
    ]);
  });

  it("leaves the last cluster untouched while paused", async () => {
    // Wave 2's other run settles: finished, or held because the rollout paused the wave's task.
    await eventually("wave 2's other run to settle", async () => {
      const r = await runOf(WAVE_2_OK);
      return (
        r?.status?.phase === "Succeeded" ||
        cond(r?.status?.conditions, "Progressing")?.reason === "TaskPaused"
      );
    });
    expect((await getRollout()).status?.phase).toBe("Paused");
    expect((await runs()).map((r) => r.spec.clusterRef.name).sort()).toEqual([CANARY, BEHIND, WAVE_2_OK]);
    const later = await getCluster(LATER);
    expect(later?.spec.version.id).toBe("4.19.7");
    expect(later?.metadata.annotations?.[MAINTENANCE_VERSION_ANNOTATIONS.askedBy]).toBeUndefined();
    expect(await runsOnManagementCluster(LATER, "4.19.7")).toBe(true);
  });

  it("hcpctl rollout status names the failed cluster and why", async () => {
    const shown = await hcpctl("rollout", "status", name);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^Phase:\s+Paused$/m);
    expect(shown.stdout).toMatch(/^Paused:\s+FailureBudgetExceeded: /m);
    expect(shown.stdout).toMatch(
      new RegExp(
        `^\\s+2\\s+${customer}\\s+${BEHIND}\\s+Failed\\s+CheckUpgradePath \\(Failed\\)\\s+UpgradeSkipsMinor: `,
        "m",
      ),
    );
  });

  it("goes on once resumed: the rest reach 4.19.10 and the rollout Succeeded", async () => {
    const resumed = await hcpctl("rollout", "resume", name);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`rollout/${name} resumed`);
    expect(resumed.stdout).toContain("spec.proceedPastWave is now 2");

    await untilRollout("the rollout to succeed", (r) => r.status?.phase === "Succeeded", LIFECYCLE_MS);
    expect((await getRollout()).status?.waves?.map((w) => [w.index, w.clusters, w.state])).toEqual([
      [1, 1, "Succeeded"],
      [2, 2, "FailuresAccepted"],
      [3, 1, "Succeeded"],
    ]);
    for (const n of [CANARY, WAVE_2_OK, LATER]) {
      expect(await runsOnManagementCluster(n, "4.19.10"), n).toBe(true);
      expect((await runOf(n))?.status?.phase, n).toBe("Succeeded");
    }
    expect((await getCluster(BEHIND))?.status?.version).toBe("4.17.40");
  }, 120_000);
});
