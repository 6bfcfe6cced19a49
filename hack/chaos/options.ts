/**
 * `npm run chaos` flags. The defaults are the figures the chaos table is specified with: 50
 * clusters per run and a management apiserver gone for 10 minutes (the broker's 60 s cut and
 * Event Grid's offline queue are properties of their faults); `--management-outage-s` shortens the
 * outage for a quicker run, which the table then names.
 */
import { parseArgs } from "node:util";

/** Clusters (each with a pool) per run. */
export const DEFAULT_CLUSTERS = 50;
/** How long the management-apiserver-outage fault keeps one management apiserver away. */
export const DEFAULT_MANAGEMENT_OUTAGE_MS = 10 * 60_000;

export interface ChaosOptions {
  help: boolean;
  /** Fault names; undefined for all of them. */
  faults?: string[];
  n: number;
  runs: number;
  managementClusters: number;
  managementOutageMs: number;
  convergeTimeoutMs: number;
  agentStatusSyncMs?: number;
}

function positive(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || value.trim() === "" || !Number.isFinite(n) || n <= 0)
    throw new Error(`--${flag} must be a positive number, not ${JSON.stringify(value)}`);
  return n;
}

export function parseChaosArgs(args: string[]): ChaosOptions {
  const { values } = parseArgs({
    args,
    options: {
      fault: { type: "string" },
      n: { type: "string", default: String(DEFAULT_CLUSTERS) },
      runs: { type: "string", default: "1" },
      "management-clusters": { type: "string", default: "2" },
      "management-outage-s": { type: "string", default: String(DEFAULT_MANAGEMENT_OUTAGE_MS / 1000) },
      "converge-timeout-s": { type: "string", default: "900" },
      "status-sync-ms": { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  return {
    help: values.help,
    ...(values.fault ? { faults: values.fault.split(",").map((s) => s.trim()) } : {}),
    n: positive("n", values.n),
    runs: positive("runs", values.runs),
    managementClusters: positive("management-clusters", values["management-clusters"]),
    managementOutageMs: positive("management-outage-s", values["management-outage-s"]) * 1000,
    convergeTimeoutMs: positive("converge-timeout-s", values["converge-timeout-s"]) * 1000,
    ...(values["status-sync-ms"]
      ? { agentStatusSyncMs: positive("status-sync-ms", values["status-sync-ms"]) }
      : {}),
  };
}
