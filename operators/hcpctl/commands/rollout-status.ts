/**
 * `hcpctl rollout status NAME`: where a Rollout stands. Each wave with its state, size and runs by
 * phase; then each cluster of the current wave and of any wave with failures, with its run's
 * phase, step and message, read from the wave's MaintenanceTask's runs (by the
 * hcp.aro.dev/maintenance-task label). -o json|yaml: {rollout, runs}.
 */
import type { MaintenanceRun, Rollout, RolloutWaveStatus } from "../../api/v1alpha1/index.ts";
import { find } from "../conditions.ts";
import type { Connect, Io } from "../io.ts";
import { withoutManagedFields } from "../output.ts";
import { formatTable } from "../table.ts";
import { printData, runsOf, type DataFormat } from "./maintenance.ts";
import { fields, indent, runMessage, runsByPhase, stepText } from "./maintenance-render.ts";
import { rolloutOf } from "./rollout.ts";

export interface RolloutStatusFlags {
  output?: DataFormat;
}

/** The waves whose clusters are listed: the current one and those with failed or timed-out runs. */
export function wavesToDetail(rollout: Rollout): RolloutWaveStatus[] {
  const current = rollout.status?.currentWave ?? 0;
  return (rollout.status?.waves ?? []).filter(
    (w) => w.index === current || (w.runs?.Failed ?? 0) + (w.runs?.TimedOut ?? 0) > 0,
  );
}

function wavesTable(rollout: Rollout): string {
  const rows = (rollout.status?.waves ?? []).map((w) => [
    String(w.index),
    w.task,
    w.state,
    String(w.clusters),
    runsByPhase(w.runs),
  ]);
  return formatTable([["WAVE", "TASK", "STATE", "CLUSTERS", "RUNS"], ...rows]);
}

function clustersTable(
  waves: readonly RolloutWaveStatus[],
  runs: ReadonlyMap<string, MaintenanceRun[]>,
): string {
  const rows = waves.flatMap((w) =>
    (runs.get(w.task) ?? []).map((r) => [
      String(w.index),
      r.metadata.namespace ?? "",
      r.spec.clusterRef.name,
      r.status?.phase ?? "Pending",
      stepText(r),
      runMessage(r),
    ]),
  );
  return formatTable([["WAVE", "NAMESPACE", "CLUSTER", "PHASE", "STEP", "MESSAGE"], ...rows]);
}

const said = (c: { reason: string; message: string } | undefined): string | undefined =>
  c ? `${c.reason}: ${c.message}` : undefined;

/** Why the rollout is where it is: paused, progressing, aborted, failures accepted. */
function stateLines(rollout: Rollout): Array<[string, string | undefined]> {
  const paused = find(rollout.status?.conditions, "Paused");
  const accepted = rollout.spec.proceedPastWave;
  return [
    ["Paused", paused?.status === "True" ? said(paused) : undefined],
    // While paused, Progressing repeats the Paused message.
    [
      "Progressing",
      paused?.status === "True" ? undefined : said(find(rollout.status?.conditions, "Progressing")),
    ],
    ["Aborted", rollout.spec.abort ? "true" : undefined],
    ["Failures accepted", accepted ? `waves 1-${accepted}` : undefined],
  ];
}

function header(rollout: Rollout): string {
  const { spec, status } = rollout;
  return fields([
    ["Name", rollout.metadata.name],
    ["Rolls out", spec.release ? `release ${spec.release.version}` : spec.task],
    ["Phase", status?.phase ?? "Pending"],
    ["Clusters", status?.clusters ?? 0],
    ["Current wave", status?.currentWave ?? 0],
    ...stateLines(rollout),
  ]);
}

function render(rollout: Rollout, runs: ReadonlyMap<string, MaintenanceRun[]>): string {
  const begun = rollout.status?.waves ?? [];
  const waves = begun.length === 0 ? "Waves: none begun\n" : `Waves:\n${indent(wavesTable(rollout))}`;
  const detailed = wavesToDetail(rollout).filter((w) => (runs.get(w.task) ?? []).length > 0);
  const clusters =
    detailed.length === 0
      ? ""
      : `Clusters of the current and failed waves:\n${indent(clustersTable(detailed, runs))}`;
  return `${header(rollout)}${waves}${clusters}`;
}

export async function runRolloutStatus(
  io: Io,
  connect: Connect,
  args: { name: string; flags: RolloutStatusFlags },
): Promise<void> {
  const conn = connect();
  const rollout = await rolloutOf(conn, args.name);
  const detailed = wavesToDetail(rollout);
  const lists = await Promise.all(detailed.map((w) => runsOf(conn, { task: w.task, namespace: undefined })));
  const runs = new Map(detailed.map((w, i) => [w.task, lists[i] ?? []]));
  if (args.flags.output)
    return printData(io, args.flags.output, {
      rollout: withoutManagedFields(rollout),
      runs: [...runs.values()].flat().map(withoutManagedFields),
    });
  io.stdout.write(render(rollout, runs));
}
