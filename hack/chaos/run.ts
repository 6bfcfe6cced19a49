/**
 * One chaos run: a batch of clusters created, some deleted and scaled before the fault, the fault
 * injected, more deleted and scaled while it lasts, the fault removed, and then a wait, on
 * evidence and with a deadline, until the world converges: every wanted cluster Ready, every
 * deleted one gone, and nothing lost, duplicated or orphaned (invariants.ts). Time to converge
 * counts from the fault's removal, or from the start of the restore of a region the fault lost.
 */
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { errorMessage } from "../../operators/runtime/errors.ts";
import type { Fault, FaultSettings, Restored } from "./faults.ts";
import { judge, type Verdict } from "./invariants.ts";
import type { RestoreContext } from "./restore-invariants.ts";
import type { ChaosRegion } from "./region.ts";
import type { Workload } from "./workload.ts";

export interface RunSettings extends FaultSettings {
  /** How long convergence may take after the fault is removed. */
  convergeTimeoutMs: number;
  /** Once converged, how long leftovers (orphans, duplicates) get to go before they count. */
  settleMs: number;
  progress(text: string): void;
}

export interface RunResult {
  fault: string;
  converged: boolean;
  /** From the fault's removal to converged and clean (or to converged, when leftovers stayed). */
  convergeMs?: number;
  lost: string[];
  duplicated: string[];
  orphaned: string[];
  /** What the workload asked for after the restored backup was taken; only with a restore. */
  lostBeyondRpo?: string[];
  /** Leftovers of those that the region reports (not orphaned); only with a restore. */
  reported?: string[];
  /** What was still not converged at the deadline. */
  pending: string[];
  notes: string[];
  /** The run itself failed (the fault could not be injected, the region would not answer). */
  error?: string;
}

const POLL_MS = 3_000;
const SNAPSHOT_TIMEOUT_MS = 20_000;

const isReady = (c: HcpCluster): boolean =>
  c.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false;

/** Waits until some of the batch is Ready, so the fault meets clusters in every state. */
async function midFlight(
  chaos: ChaosRegion,
  names: Set<string>,
  wanted: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let ready = 0;
  while (Date.now() < deadline) {
    const list = await chaos.service
      .listAll<HcpCluster>(HcpClusterResource, { signal: AbortSignal.timeout(SNAPSHOT_TIMEOUT_MS) })
      .catch(() => undefined);
    ready = (list?.items ?? []).filter(
      (c) => names.has(`${c.metadata.namespace}/${c.metadata.name}`) && isReady(c),
    ).length;
    if (ready >= wanted) return ready;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return ready;
}

/** What is still in the way, in one line. */
function progressLine(verdict: Verdict): string {
  return verdict.converged
    ? `converged; leftovers: ${[...verdict.lost, ...verdict.duplicated, ...verdict.orphaned].slice(0, 3).join("; ")}`
    : `${verdict.pending.length} pending, e.g. ${verdict.pending.slice(0, 3).join("; ")}`;
}

/**
 * Polls the world until converged and clean, or converged and settled, or the deadline; timed
 * from `started`, and judged with a restore's context when the fault restored the region.
 */
async function converge(
  chaos: ChaosRegion,
  workload: Workload,
  settings: RunSettings,
  { started, restore }: { started: number; restore?: RestoreContext },
): Promise<{ verdict: Verdict; atMs?: number }> {
  let verdict: Verdict | undefined;
  let convergedAt: number | undefined;
  let said = "";
  while (Date.now() - started < settings.convergeTimeoutMs) {
    const snapshot = await chaos.snapshot(AbortSignal.timeout(SNAPSHOT_TIMEOUT_MS)).catch(() => undefined);
    if (snapshot) {
      verdict = judge(snapshot, workload.expected(), restore);
      const clean = verdict.lost.length + verdict.duplicated.length + verdict.orphaned.length === 0;
      if (verdict.converged) convergedAt ??= Date.now();
      else convergedAt = undefined;
      if (verdict.converged && clean) return { verdict, atMs: Date.now() - started };
      if (convergedAt !== undefined && Date.now() - convergedAt > settings.settleMs)
        return { verdict, atMs: convergedAt - started };
      const status = progressLine(verdict);
      if (status !== said) settings.progress((said = status));
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  verdict ??= {
    converged: false,
    pending: ["the region never answered"],
    lost: [],
    duplicated: [],
    orphaned: [],
    reported: [],
  };
  return { verdict };
}

/** Runs `fault` once against a running region and judges the outcome. */
export async function runFault(
  fault: Fault,
  chaos: ChaosRegion,
  workload: Workload,
  settings: RunSettings,
): Promise<RunResult> {
  const notes: string[] = [];
  let restore: Restored | undefined;
  const result = (verdict: Verdict, extra: Partial<RunResult>): RunResult => ({
    fault: fault.name,
    converged: verdict.converged,
    lost: verdict.lost,
    duplicated: verdict.duplicated,
    orphaned: verdict.orphaned,
    ...(restore ? { lostBeyondRpo: restore.lostBeyondRpo, reported: verdict.reported } : {}),
    pending: verdict.converged ? [] : verdict.pending,
    notes,
    ...extra,
  });
  settings.progress(`creating ${settings.n} clusters with a node pool each`);
  const batch = await workload.createBatch(settings.n);
  const names = new Set(batch.all.map((e) => `${e.namespace}/${e.name}`));
  const ready = await midFlight(chaos, names, Math.ceil(settings.n / 5), settings.convergeTimeoutMs);
  settings.progress(
    `${ready} of ${settings.n} Ready: deleting ${batch.deleteBefore.length}, scaling ${batch.scaleBefore.length}`,
  );
  await Promise.all([workload.delete(batch.deleteBefore), workload.scale(batch.scaleBefore)]);

  const afterwards: Array<() => string> = [];
  let markInjected = (): void => undefined;
  const injected = new Promise<void>((resolve) => (markInjected = resolve));
  const ctx = {
    chaos,
    workload,
    settings,
    injected: () => markInjected(),
    note: (t: string) => void notes.push(t),
    noteAfterwards: (t: () => string) => void afterwards.push(t),
    restored: (r: Restored) => void (restore = r),
    progress: (t: string) => settings.progress(t),
  };
  settings.progress(`injecting ${fault.name}`);
  const running = fault.run(ctx).then(
    () => undefined,
    (err: unknown) => errorMessage(err),
  );
  await Promise.race([injected, running]);
  // Those deleted under the fault are scaled first: an update and a deletion close together.
  const scaleThenDelete = async (): Promise<void> => {
    await workload.scale(batch.deleteDuring);
    await workload.delete(batch.deleteDuring);
  };
  await Promise.all([scaleThenDelete(), workload.scale(batch.scaleDuring)]);
  const error = await running;
  if (error) notes.push(`the fault failed: ${error}`);
  settings.progress(`${fault.name} removed; waiting for convergence`);
  const { verdict, atMs } = await converge(chaos, workload, settings, {
    started: restore?.startedAt ?? Date.now(),
    ...(restore ? { restore: restore.context } : {}),
  });
  notes.push(...afterwards.map((t) => t()));
  return result(verdict, { convergeMs: atMs, ...(error ? { error } : {}) });
}
