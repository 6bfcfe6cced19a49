/**
 * The chaos table's short subset, through the same code as `npm run chaos` (hack/chaos/): five
 * clusters per fault in one region of its own, every component a process of its own; the broker
 * killed, every agent killed mid-apply and restarted with an empty store, the operators process
 * killed at four failpoints between a write and its status, and killed again while a key-rotation
 * rollout's wave-2 run waits in a step, and killed once more after the metering API accepted a batch
 * of usage hours and before the ledger marked it. Each must converge with nothing lost, duplicated or
 * orphaned (for the rollout: Succeeded, one run per wave and cluster, each key rotated once), and
 * each failpoint and the mid-step moment must really have been reached.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allFaults } from "../../hack/chaos/faults.ts";
import type { RunResult } from "../../hack/chaos/run.ts";
import { runSuite } from "../../hack/chaos/suite.ts";
import { formatTable } from "../../hack/chaos/table.ts";

const FAULTS = [
  "broker-kill",
  "agent-crash",
  "operators-failpoints",
  "operators-kill-mid-rollout",
  "operators-kill-export-before-mark",
];
const FAILPOINTS = [
  "maestro-agent/mid-apply",
  "cluster/after-load-balancer-created",
  "maestro-server/after-publish",
  "maestro-server/after-delete-published",
] as const;

let results: RunResult[] = [];
let logDir = "";

beforeAll(async () => {
  logDir = await mkdtemp(join(tmpdir(), "hcp-chaos-test-"));
  const started = Date.now();
  const report = await runSuite({
    faults: allFaults().filter((f) => FAULTS.includes(f.name)),
    failpoints: FAILPOINTS,
    n: 5,
    runs: 1,
    managementClusters: 2,
    managementOutageMs: 0,
    convergeTimeoutMs: 60_000,
    settleMs: 10_000,
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    agentStatusSyncMs: 1_000,
    logRoot: logDir,
    shareRegion: true,
    progress: (text) =>
      process.stderr.write(`[chaos] +${Math.round((Date.now() - started) / 1000)} s ${text}\n`),
  });
  results = report.results;
  process.stderr.write(`${formatTable(report.rows)}\n`);
  // Passing runs take about two and a half minutes; the margin lets a run that never converges report why.
}, 300_000);

afterAll(async () => {
  // The components' logs stay for a failed run to be read.
  const clean = results.every(
    (r) => r.converged && r.lost.length + r.duplicated.length + r.orphaned.length === 0,
  );
  if (clean && results.length === FAULTS.length) await rm(logDir, { recursive: true, force: true });
  else process.stderr.write(`[chaos] component logs kept in ${logDir}\n`);
});

describe("chaos subset", () => {
  it.each(FAULTS)("%s: converges with nothing lost, duplicated or orphaned", (fault) => {
    const result = results.find((r) => r.fault === fault);
    expect(result).toMatchObject({ converged: true, lost: [], duplicated: [], orphaned: [], pending: [] });
    expect(result?.error).toBeUndefined();
  });

  it("reached every failpoint it armed", () => {
    const notes = results.flatMap((r) => r.notes);
    for (const fp of [...FAILPOINTS, "usage/after-export-before-mark"])
      expect(notes.find((n) => n.startsWith(`${fp}:`))).toMatch(/killed after/);
  });

  it("killed the operators while a rollout's wave-2 run was mid-step", () => {
    const notes = results.find((r) => r.fault === "operators-kill-mid-rollout")?.notes ?? [];
    expect(notes[0]).toMatch(/^killed .* into the rollout, \S+-wave-2-\S+ in SwitchSigningKey/);
  });
});
