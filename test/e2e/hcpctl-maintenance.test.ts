/**
 * `hcpctl maintenance …` against the service cluster's real kube-apiserver, with the maintenance
 * controller running (its one task type's step held by the test so that runs stay to be looked
 * at): `run` creates a task that the controller turns into runs, `list` and `describe` show the
 * runs with their step, `pause` and `resume` change spec.paused, `-o json` parses; bad flags are
 * refused naming the flag before anything is written, and the API server's own refusal is shown
 * with the field and the flag. With the rollout controller too: `rollout start` makes a Rollout
 * whose canary fails (the test's step fails that one cluster), so it pauses itself; `rollout
 * status` shows the waves and the failed and current clusters; `resume` accepts the canary's
 * failures (spec.proceedPastWave) and says so; `pause`, `resume` and `abort` (only with --yes) set
 * the spec. Every step waits for evidence in the objects or the output.
 */
import { load } from "js-yaml";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
  RolloutResource,
  type Rollout,
} from "../../operators/api/v1alpha1/index.ts";
import { MaintenanceController } from "../../operators/maintenance/controller.ts";
import { RolloutController } from "../../operators/rollout/controller.ts";
import type { TaskRegistry } from "../../operators/maintenance/step.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { clusterInfo } from "../support/region.ts";

const client = clientFor("service");
const sampleText = await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8");
const suffix = `${process.pid}-${Date.now().toString(36)}`;
const HELD = "held by the test";
/** The cluster whose run the test's step fails (first in the rollout's order, so its canary). */
const FAILING = "a-fail";
let ns: { name: string; remove(): Promise<void> };
const clusters = new ClusterRegistry();
const stop = new AbortController();
let running: Promise<void>[] = [];

/** hcpctl in this process against the service cluster. */
const hcpctl = (...args: string[]) =>
  runHcpctl("--kubeconfig", clusterInfo("service").kubeconfigPath, ...args);

/** A step that never finishes: a Running run stays on it, saying so. */
const registry: TaskRegistry = new Map([
  [
    "UpgradeControlPlane",
    {
      steps: [
        {
          name: "Hold",
          execute: ({ cluster }) =>
            Promise.resolve(
              cluster.metadata.name === FAILING
                ? { kind: "terminal", message: "failed by the test" }
                : { kind: "waiting", message: HELD, requeueMs: 60_000 },
            ),
        },
      ],
    },
  ],
]);

async function makeCluster(name: string, placed: boolean, fleet = `hm-${suffix}`): Promise<void> {
  const c = load(sampleText) as HcpCluster;
  c.metadata = { name, namespace: ns.name, labels: { fleet } };
  c.spec.dns.baseDomainPrefix = `hm${name}${process.pid % 10000}`;
  await client.create(HcpClusterResource, c);
  if (placed)
    await client.mergePatch(
      HcpClusterResource,
      { name, namespace: ns.name },
      { status: { managementCluster: "mgmt-1" } },
      "status",
    );
}

beforeAll(async () => {
  ns = await tempNamespace(client, "hm");
  await makeCluster("placed", true);
  await makeCluster("unplaced", false);
  for (const name of [FAILING, "b-ok", "c-ok"]) await makeCluster(name, true, `ro-${suffix}`);
  const service = clusters.add("service", { path: clusterInfo("service").kubeconfigPath });
  running = [
    new MaintenanceController({ cluster: service, tasks: registry }).start(stop.signal),
    new RolloutController({ cluster: service }).start(stop.signal),
  ];
});

afterAll(async () => {
  const rollouts = await client.list<Rollout>(RolloutResource);
  for (const r of rollouts.items.filter((r) => r.metadata.name?.endsWith(suffix)))
    await client.delete(RolloutResource, { name: r.metadata.name ?? "" });
  // The rollout controller lets go of each rollout; the garbage collector takes its wave tasks.
  await eventually(
    "the rollouts to go",
    async () => !(await client.list(RolloutResource)).items.some((r) => r.metadata.name?.endsWith(suffix)),
    60_000,
  );
  const tasks = await client.list<MaintenanceTask>(MaintenanceTaskResource);
  for (const t of tasks.items.filter((t) => t.metadata.name?.endsWith(suffix)))
    await client.delete(MaintenanceTaskResource, { name: t.metadata.name ?? "" });
  // The actuator lets go of each run (its finalizer) before it stops.
  await eventually(
    "the garbage collector to remove the runs",
    async () => (await client.list(MaintenanceRunResource, { namespace: ns.name })).items.length === 0,
    60_000,
  );
  stop.abort();
  await Promise.all(running);
  clusters.stopAll();
  for (const c of (await client.list<HcpCluster>(HcpClusterResource, { namespace: ns.name })).items)
    await client.delete(HcpClusterResource, { name: c.metadata.name ?? "", namespace: ns.name });
  await ns.remove();
});

const runsOf = async (task: string): Promise<MaintenanceRun[]> =>
  (await client.list<MaintenanceRun>(MaintenanceRunResource, { namespace: ns.name })).items.filter(
    (r) => r.spec.task === task,
  );

describe("hcpctl maintenance", () => {
  const task = `upgrade-${suffix}`;

  it("refuses bad flags naming the flag, before anything is written", async () => {
    const before = (await client.list(MaintenanceTaskResource)).items.length;
    const cases: Array<[string[], string]> = [
      [["UpgradeControlPlane", "--clusters", `${ns.name}/placed`], "--release"],
      [["UpgradeControlPlane", "--release", "4.19.10"], "--clusters"],
      [["UpgradeControlPlane", "--release", "4.19", "--clusters", `${ns.name}/placed`], "--release"],
      [["UpgradeControlPlane", "--release", "4.19.10", "--selector", "a!=b"], "--selector"],
      [["Reticulate", "--clusters", `${ns.name}/placed`], "task type"],
      [
        ["UpgradeControlPlane", "--release", "4.19.10", "--clusters", "x", "--not-after", "soon"],
        "--clusters",
      ],
      [
        [
          "UpgradeControlPlane",
          "--release",
          "4.19.10",
          "--clusters",
          `${ns.name}/placed`,
          "--max-per-management-cluster",
          "101",
        ],
        "--max-per-management-cluster",
      ],
    ];
    for (const [args, flag] of cases) {
      const out = await hcpctl("maintenance", "run", ...args, "--name", `bad-${suffix}`);
      expect(out.code, args.join(" ")).toBe(1);
      expect(out.stderr, args.join(" ")).toContain(flag);
    }
    expect((await client.list(MaintenanceTaskResource)).items.length).toBe(before);
  });

  it("shows the API server's refusal with the field and the flag that set it", async () => {
    const out = await hcpctl(
      "maintenance",
      "run",
      "UpgradeControlPlane",
      "--release",
      "4.19.10",
      "--selector",
      "-bad=x",
      "--name",
      `refused-${suffix}`,
    );
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/spec\.clusters\.selector\.matchLabels.*-bad.*\(--selector\)/);
    expect(await client.find(MaintenanceTaskResource, `refused-${suffix}`)).toBeUndefined();
  });

  it("run creates the task; list and describe show its runs with their step", async () => {
    const made = await hcpctl(
      "maintenance",
      "run",
      "UpgradeControlPlane",
      "--release",
      "4.19.10",
      "--clusters",
      `${ns.name}/placed,${ns.name}/unplaced`,
      "--max-per-management-cluster",
      "2",
      "--name",
      task,
    );
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    expect(made.stdout).toContain(`maintenancetask/${task} created`);
    const created = await client.get<MaintenanceTask>(MaintenanceTaskResource, task);
    expect(created.spec).toMatchObject({
      task: "UpgradeControlPlane",
      release: { version: "4.19.10" },
      clusters: { names: [`${ns.name}/placed`, `${ns.name}/unplaced`] },
      urgency: "Normal",
      maxConcurrentPerManagementCluster: 2,
    });

    await eventually("the placed cluster's run on its held step, the other waiting", async () => {
      const runs = await runsOf(task);
      const placed = runs.find((r) => r.spec.clusterRef.name === "placed");
      const unplaced = runs.find((r) => r.spec.clusterRef.name === "unplaced");
      return (
        placed?.status?.phase === "Running" &&
        placed.status.steps?.[0]?.message === HELD &&
        unplaced?.status?.phase === "Waiting"
      );
    });

    const listed = await hcpctl("maintenance", "list", "--task", task, "-n", ns.name);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^TASK\\s+TYPE\\s+STATE\\s+CLUSTERS\\s+RUNS`, "m"));
    expect(listed.stdout).toMatch(new RegExp(`^${task}\\s+UpgradeControlPlane 4\\.19\\.10\\s`, "m"));
    expect(listed.stdout).toMatch(/^CLUSTER\s+TASK\s+PHASE\s+STEP\s+ATTEMPTS\s+AGE$/m);
    expect(listed.stdout).toMatch(
      new RegExp(`^placed\\s+${task}\\s+Running\\s+Hold \\(Running\\)\\s+0\\s`, "m"),
    );
    expect(listed.stdout).toMatch(new RegExp(`^unplaced\\s+${task}\\s+Waiting\\s`, "m"));

    const onlyRunning = await hcpctl("maintenance", "list", "-A", "--phase", "running", "--task", task);
    expect(onlyRunning.stdout).toMatch(new RegExp(`^${ns.name}\\s+placed\\s+${task}\\s+Running`, "m"));
    expect(onlyRunning.stdout).not.toContain("unplaced");

    const described = await hcpctl("maintenance", "describe", task);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/^Release:\s+4\.19\.10$/m);
    expect(described.stdout).toMatch(/^Runs:\s+Waiting=1 Running=1$/m);
    expect(described.stdout).toMatch(
      new RegExp(`${ns.name}\\s+placed\\s+${task}\\s+Running\\s+Hold.*${HELD}`),
    );
    expect(described.stdout).toMatch(/unplaced.*Waiting.*to be placed on a management cluster/);

    const runName =
      (await runsOf(task)).find((r) => r.spec.clusterRef.name === "placed")?.metadata.name ?? "";
    const one = await hcpctl("maintenance", "describe", "run", runName, "-n", ns.name);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^Phase:\s+Running$/m);
    expect(one.stdout).toMatch(/^Management cluster:\s+mgmt-1$/m);
    expect(one.stdout).toMatch(new RegExp(`^\\s+Hold\\s+Running\\s+0\\s.*${HELD}$`, "m"));
  });

  it("-o json parses: list as a v1 List, describe as {task, runs}, a run as itself", async () => {
    const list = JSON.parse(
      (await hcpctl("maintenance", "list", "--task", task, "-A", "-o", "json")).stdout,
    ) as {
      kind: string;
      items: Array<{ kind: string; metadata: { name: string } }>;
    };
    expect(list.kind).toBe("List");
    expect(list.items.map((i) => i.kind).sort()).toEqual([
      "MaintenanceRun",
      "MaintenanceRun",
      "MaintenanceTask",
    ]);
    const described = JSON.parse((await hcpctl("maintenance", "describe", task, "-o", "json")).stdout) as {
      task: MaintenanceTask;
      runs: MaintenanceRun[];
    };
    expect(described.task.metadata.name).toBe(task);
    expect(described.task.metadata.managedFields).toBeUndefined();
    expect(described.runs.map((r) => r.spec.clusterRef.name).sort()).toEqual(["placed", "unplaced"]);
  });

  it("pause and resume set and clear spec.paused, and say when there is nothing to change", async () => {
    const paused = await hcpctl("maintenance", "pause", task);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(`maintenancetask/${task} paused`);
    expect((await client.get<MaintenanceTask>(MaintenanceTaskResource, task)).spec.paused).toBe(true);
    expect((await hcpctl("maintenance", "pause", task)).stdout).toContain("already paused");

    const resumed = await hcpctl("maintenance", "resume", task);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`maintenancetask/${task} resumed`);
    expect((await client.get<MaintenanceTask>(MaintenanceTaskResource, task)).spec.paused).toBe(false);

    const missing = await hcpctl("maintenance", "pause", `missing-${suffix}`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`MaintenanceTask "missing-${suffix}" not found`);
  });
});

describe("hcpctl rollout", () => {
  const name = `ro-${suffix}`;
  const rollout = (): Promise<Rollout> => client.get<Rollout>(RolloutResource, name);
  const pausedReason = (r: Rollout): string | undefined =>
    r.status?.conditions?.find((c) => c.type === "Paused" && c.status === "True")?.reason;
  /** Waits for the rollout to satisfy `predicate`; on a timeout, says where it and its runs stood. */
  async function untilRollout(
    what: string,
    predicate: (r: Rollout) => boolean,
    timeoutMs = 60_000,
  ): Promise<void> {
    try {
      await eventually(what, async () => predicate(await rollout()), timeoutMs);
    } catch (err) {
      const runs = (await client.list<MaintenanceRun>(MaintenanceRunResource, { namespace: ns.name })).items
        .filter((r) => r.spec.task.startsWith(name))
        .map((r) => ({ name: r.metadata.name, status: r.status }));
      const status = JSON.stringify((await rollout()).status);
      throw new Error(`${String(err)}; the rollout's status: ${status}; its runs: ${JSON.stringify(runs)}`, {
        cause: err,
      });
    }
  }

  it("refuses bad flags naming the flag, and shows the API server's refusal with the field and flag", async () => {
    const cases: Array<[string[], string]> = [
      [["--selector", `fleet=ro-${suffix}`], "--release"],
      [["--release", "4.19.10", "--task", "RotateServiceAccountSigningKey", "--clusters", "a/b"], "--task"],
      [["--release", "4.19.10", "--selector", `fleet=ro-${suffix}`, "--growth", "11"], "--growth"],
      [
        ["--release", "4.19.10", "--selector", `fleet=ro-${suffix}`, "--canary", "3", "--max-wave", "2"],
        "--max-wave",
      ],
      [["--release", "4.19.10", "--selector", "-bad=x"], "(--selector)"],
    ];
    for (const [args, flag] of cases) {
      const out = await hcpctl("rollout", "start", name, ...args);
      expect(out.code, args.join(" ")).toBe(1);
      expect(out.stderr, args.join(" ")).toContain(flag);
    }
    expect(await client.find(RolloutResource, name)).toBeUndefined();
  });

  it("start, then status of a rollout that paused itself over its canary's failure", async () => {
    const started = await hcpctl(
      "rollout",
      "start",
      name,
      "--release",
      "4.19.10",
      "--selector",
      `fleet=ro-${suffix}`,
      "--canary",
      "1",
      "--growth",
      "2",
      "--max-per-management-cluster",
      "2",
    );
    expect(started.stderr).toBe("");
    expect(started.stdout).toContain(`rollout/${name} started`);
    expect((await rollout()).spec).toMatchObject({
      release: { version: "4.19.10" },
      clusters: { selector: { matchLabels: { fleet: `ro-${suffix}` } } },
      waves: { canary: 1, growth: 2 },
      maxConcurrentPerManagementCluster: 2,
      urgency: "Normal",
    });
    await untilRollout(
      "the rollout to pause itself over the canary's failure",
      (r) => pausedReason(r) === "FailureBudgetExceeded",
    );

    const status = await hcpctl("rollout", "status", name);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^Phase:\s+Paused$/m);
    expect(status.stdout).toMatch(/^Paused:\s+FailureBudgetExceeded: /m);
    expect(status.stdout).toMatch(
      new RegExp(`^\\s+1\\s+${name}-wave-1\\s+FailureBudgetExceeded\\s+1\\s+Failed=1$`, "m"),
    );
    expect(status.stdout).toMatch(
      new RegExp(
        `^\\s+1\\s+${ns.name}\\s+${FAILING}\\s+Failed\\s+Hold \\(Failed\\)\\s+failed by the test$`,
        "m",
      ),
    );

    const data = JSON.parse((await hcpctl("rollout", "status", name, "-o", "json")).stdout) as {
      rollout: Rollout;
      runs: MaintenanceRun[];
    };
    expect(data.rollout.status?.waves?.[0]?.state).toBe("FailureBudgetExceeded");
    expect(data.runs.map((r) => r.spec.clusterRef.name)).toEqual([FAILING]);
  });

  it("resume accepts the halted wave's failures and says so; the next wave starts", async () => {
    const resumed = await hcpctl("rollout", "resume", name);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`rollout/${name} resumed`);
    expect(resumed.stdout).toContain("spec.proceedPastWave is now 1");
    expect(resumed.stdout).toContain(`${ns.name}/${FAILING}`);
    expect((await rollout()).spec.proceedPastWave).toBe(1);

    await untilRollout(
      "wave 2's runs on their held step",
      (r) => r.status?.currentWave === 2 && r.status.waves?.[1]?.runs?.Running === 2,
    );
    const status = await hcpctl("rollout", "status", name);
    expect(status.stdout).toMatch(/^Phase:\s+Progressing$/m);
    expect(status.stdout).toMatch(/^Failures accepted:\s+waves 1-1$/m);
    expect(status.stdout).toMatch(new RegExp(`^\\s+1\\s+${name}-wave-1\\s+FailuresAccepted\\s`, "m"));
    for (const cluster of ["b-ok", "c-ok"])
      expect(status.stdout).toMatch(
        new RegExp(`^\\s+2\\s+${ns.name}\\s+${cluster}\\s+Running\\s+Hold \\(Running\\)\\s+${HELD}$`, "m"),
      );
  });

  it("pause and resume set and clear spec.paused", async () => {
    const paused = await hcpctl("rollout", "pause", name);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(`rollout/${name} paused`);
    await eventually(
      "the rollout Paused by its spec",
      async () => pausedReason(await rollout()) === "PausedBySpec",
    );
    expect((await hcpctl("rollout", "pause", name)).stdout).toContain("already paused");

    const resumed = await hcpctl("rollout", "resume", name);
    expect(resumed.stdout).toBe(`rollout/${name} resumed\n`);
    expect((await rollout()).spec.paused).toBe(false);
    expect((await hcpctl("rollout", "resume", name)).stdout).toContain("is not paused");
  });

  it("abort asks for --yes, then sets spec.abort and the rollout ends Aborted", async () => {
    const asked = await hcpctl("rollout", "abort", name);
    expect(asked.code).toBe(1);
    expect(asked.stderr).toContain("--yes");
    expect(asked.stderr).toContain("cannot be undone");
    expect((await rollout()).spec.abort).toBeUndefined();

    const aborted = await hcpctl("rollout", "abort", name, "--yes");
    expect(aborted.code).toBe(0);
    expect(aborted.stdout).toContain(`rollout/${name} aborted`);
    expect((await rollout()).spec.abort).toBe(true);
    await untilRollout("the rollout Aborted", (r) => r.status?.phase === "Aborted");
    expect((await hcpctl("rollout", "status", name)).stdout).toMatch(/^Aborted:\s+true$/m);
    expect((await hcpctl("rollout", "resume", name)).stderr).toContain("has aborted");
  });
});
