/**
 * `npm run chaos [-- --fault <name>[,<name>…]] [--n 50] [--runs 1] [--management-clusters 2]
 * [--management-outage-s 600] [--converge-timeout-s 900] [--status-sync-ms <ms>]`
 *
 * While N HcpClusters with a node pool each are created, scaled and deleted, one fault at a time
 * is injected and removed (hack/chaos/faults.ts lists them); then the region must converge with
 * nothing lost, duplicated or orphaned (hack/chaos/invariants.ts). Prints the table (fault, runs,
 * converged, time to converge, lost, duplicated, orphaned) and writes every finding to
 * .local/chaos.json. Exits 1 unless every fault run converged clean.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { allFaults } from "./chaos/faults.ts";
import { parseChaosArgs } from "./chaos/options.ts";
import { runSuite } from "./chaos/suite.ts";
import { clean, formatTable, type Row } from "./chaos/table.ts";

const options = parseChaosArgs(process.argv.slice(2));

const faults = allFaults();
if (options.help) {
  for (const f of faults) process.stdout.write(`${f.name}\n    ${f.what}\n`);
  process.exit(0);
}
const chosen = options.faults ?? faults.map((f) => f.name);
const unknown = chosen.filter((name) => !faults.some((f) => f.name === name));
if (unknown.length > 0) throw new Error(`unknown fault(s) ${unknown.join(", ")}; --help lists them`);

const { n } = options;
const logRoot = `.local/chaos-logs/${new Date().toISOString().replace(/[:.]/g, "-")}`;
const started = Date.now();
const report = await runSuite({
  faults: faults.filter((f) => chosen.includes(f.name)),
  n,
  runs: options.runs,
  managementClusters: options.managementClusters,
  managementOutageMs: options.managementOutageMs,
  convergeTimeoutMs: options.convergeTimeoutMs,
  settleMs: 60_000,
  simulator: { provisionDelayMs: 1_000, deleteDelayMs: 500 },
  agentStatusSyncMs: options.agentStatusSyncMs,
  logRoot,
  progress: (text) => process.stderr.write(`[chaos] ${new Date().toISOString()} ${text}\n`),
});
const notRun: Row[] = faults
  .filter((f) => !chosen.includes(f.name))
  .map((f) => ({ fault: f.name, runs: 0, converged: 0, lost: 0, duplicated: 0, orphaned: 0, notRun: true }));
const rows = [...report.rows, ...notRun];

// A shortened outage is not the specified fault: the table says how long it was.
const outage = chosen.includes("management-apiserver-outage")
  ? `, management apiserver outage ${Math.round(options.managementOutageMs / 1000)} s`
  : "";
const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, load ${loadavg()[0]?.toFixed(1)} at the end`;
process.stdout.write(
  `\nChaos table: N=${n} clusters per run${outage}, ${machine}, ${Math.round((Date.now() - started) / 60_000)} min\n\n`,
);
process.stdout.write(`${formatTable(rows)}\n`);
for (const r of report.results) {
  const findings = [
    ...r.notes,
    ...r.lost.map((x) => `lost: ${x}`),
    ...r.duplicated.map((x) => `duplicated: ${x}`),
    ...(r.lostBeyondRpo ?? []).map((x) => `lost beyond the recovery point: ${x}`),
    ...(r.reported ?? []).map((x) => `reported by the region: ${x}`),
  ];
  findings.push(
    ...r.orphaned.map((x) => `orphaned: ${x}`),
    ...r.pending.slice(0, 10).map((x) => `pending: ${x}`),
  );
  if (r.error) findings.push(`error: ${r.error}`);
  process.stdout.write(`\n${r.fault}\n${findings.map((x) => `  - ${x}`).join("\n")}\n`);
}
await mkdir(".local", { recursive: true });
await writeFile(
  ".local/chaos.json",
  JSON.stringify({ n, machine, logRoot, rows, results: report.results }, null, 2),
);
process.stdout.write(`\nFindings and logs: .local/chaos.json, ${logRoot}\n`);
process.exit(rows.filter((r) => !r.notRun).every(clean) ? 0 : 1);
