/**
 * operators-kill-mid-rollout: a fleet rollout of RotateServiceAccountSigningKey over clusters of
 * the workload's own, and the operators process killed with SIGKILL while a run of its second wave
 * is in the middle of a step (SwitchSigningKey waiting for the management cluster to apply the new
 * key), held down, and started again. What must hold afterwards (the rollout Succeeded, one run
 * per wave and cluster, each keyring rotated exactly once) is judged with the rest of the world in
 * rollout-invariants.ts.
 */
import {
  HcpClusterResource,
  MAINTENANCE_LABELS,
  MaintenanceRunResource,
  RolloutResource,
  type HcpCluster,
  type MaintenanceRun,
  type Rollout,
} from "../../operators/api/v1alpha1/index.ts";
import { lasting, seconds } from "./fault-tools.ts";
import type { Fault, FaultContext } from "./faults.ts";
import type { Expected } from "./workload.ts";

/** Waves of 1, 2 and 4: the kill lands in a wave after the canary, with another still to come. */
const ROLLOUT_CLUSTERS = 7;
/** The wave whose run the kill waits for. */
const KILLED_WAVE = 2;
const STEP = "SwitchSigningKey";
const DOWN_MS = 5_000;
const READY_TIMEOUT_MS = 10 * 60_000;
const MID_STEP_TIMEOUT_MS = 5 * 60_000;
const REQUEST_TIMEOUT_MS = 20_000;

/** Polls `check` until it yields a value or the deadline passes; a failed read is a no. */
async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = await check().catch(() => undefined);
    if (found !== undefined) return found;
    await lasting(250);
  }
  return undefined;
}

const nameOf = (e: Expected): string => `${e.namespace}/${e.name}`;

/** Every one of `names` Ready with an active signing key; undefined until then. */
async function allReady(ctx: FaultContext, names: Set<string>): Promise<HcpCluster[] | undefined> {
  const list = await ctx.chaos.service.listAll<HcpCluster>(HcpClusterResource, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const ours = list.items.filter((c) => names.has(`${c.metadata.namespace}/${c.metadata.name}`));
  const ready = ours.filter(
    (c) =>
      c.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") &&
      c.status.serviceAccountSigningKey?.appliedKeyId !== undefined,
  );
  return ready.length === names.size ? ready : undefined;
}

/** A run of the wave, Running, with STEP begun and not finished. */
async function midStep(ctx: FaultContext, task: string): Promise<MaintenanceRun | undefined> {
  const runs = await ctx.chaos.service.listAll<MaintenanceRun>(MaintenanceRunResource, {
    labelSelector: `${MAINTENANCE_LABELS.task}=${task}`,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return runs.items.find(
    (r) =>
      r.status?.phase === "Running" && r.status.steps?.some((s) => s.name === STEP && s.state === "Running"),
  );
}

async function phaseOf(ctx: FaultContext, name: string): Promise<string | undefined> {
  const r = await ctx.chaos.service.find<Rollout>(RolloutResource, name, undefined, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return r?.status?.phase;
}

export const operatorsKillMidRollout: Fault = {
  name: "operators-kill-mid-rollout",
  what: `a Rollout of RotateServiceAccountSigningKey over ${ROLLOUT_CLUSTERS} clusters (waves 1, 2, 4, Urgent, 2 at once per management cluster); the operators killed with SIGKILL while a wave-${KILLED_WAVE} run waits in ${STEP}, down ${DOWN_MS / 1000} s, started again; the rollout must succeed with one run per cluster and each key rotated once`,
  async run(ctx) {
    ctx.progress(`creating ${ROLLOUT_CLUSTERS} clusters for the rollout`);
    const made = await Promise.all(Array.from({ length: ROLLOUT_CLUSTERS }, () => ctx.workload.createOne()));
    const names = new Set(made.map(nameOf));
    const ready = await until(() => allReady(ctx, names), READY_TIMEOUT_MS);
    if (!ready)
      throw new Error(
        `the rollout's ${ROLLOUT_CLUSTERS} clusters were not Ready in ${seconds(READY_TIMEOUT_MS)}`,
      );

    const rollout = `chaos-rotate-${Date.now().toString(36)}`;
    await ctx.chaos.service.create<Rollout>(RolloutResource, {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "Rollout",
      metadata: { name: rollout },
      spec: {
        task: "RotateServiceAccountSigningKey",
        clusters: { names: [...names].sort() },
        waves: { canary: 1, growth: 2 },
        urgency: "Urgent",
        maxConcurrentPerManagementCluster: 2,
      },
    });
    const started = Date.now();
    ctx.progress(`Rollout ${rollout} started; waiting for a wave-${KILLED_WAVE} run in ${STEP}`);
    const task = `${rollout}-wave-${KILLED_WAVE}`;
    const caught = await until(() => midStep(ctx, task), MID_STEP_TIMEOUT_MS);
    ctx.note(
      caught
        ? `killed ${seconds(Date.now() - started)} into the rollout, ${caught.metadata.namespace}/${caught.metadata.name} in ${STEP}: ${caught.status?.steps?.find((s) => s.name === STEP)?.message ?? ""}`
        : `no ${task} run seen in ${STEP} in ${seconds(MID_STEP_TIMEOUT_MS)}: killed at whatever point the rollout had reached`,
    );

    ctx.injected();
    await Promise.all(ctx.chaos.operators.map((s) => s.restart({ whileDown: () => lasting(DOWN_MS) })));
    const restarted = Date.now();
    // Timed in the background until the run reads its notes: the run's convergence wait is what
    // holds the rollout to account.
    let succeededAfter: number | undefined;
    let watching = true;
    void (async () => {
      while (watching && succeededAfter === undefined) {
        if ((await phaseOf(ctx, rollout).catch(() => undefined)) === "Succeeded")
          succeededAfter = Date.now() - restarted;
        else await lasting(1_000);
      }
    })();
    ctx.noteAfterwards(() => {
      watching = false;
      return succeededAfter === undefined
        ? `Rollout ${rollout} not seen Succeeded`
        : `Rollout ${rollout} Succeeded ${seconds(succeededAfter)} after the restart`;
    });
  },
};
