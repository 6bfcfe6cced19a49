/**
 * The faults of the usage ledger and its exporter (issue 35). Each writes a backlog of complete
 * hours first (metering.ts), so the operators' exporter is reporting when the fault hits; every
 * run, like every other row's, is judged with metering-invariants.ts: no hour lost, none reported
 * twice, the ledger equal to the metering API's events.
 */
import type { MarketplaceFault } from "../harness/marketplace-emulator/index.ts";
import { killAt, lasting, seen } from "./fault-tools.ts";
import type { Fault, FaultContext } from "./faults.ts";

const BACKLOG_CLUSTERS = 40;

/** Writes the backlog; resolves once the metering API has taken some of it (the export is under way). */
async function backlogExporting(ctx: FaultContext): Promise<void> {
  const { metering } = ctx.chaos;
  const before = metering.market.accepted().length;
  const rows = await metering.seedBacklog(BACKLOG_CLUSTERS);
  const exporting = await seen(() => metering.market.accepted().length > before, 60_000);
  ctx.note(
    `${rows} backlog hours written; ${exporting ? "the exporter was reporting them" : "no export seen in 60 s"}`,
  );
}

export const postgresRestart: Fault = {
  name: "metering-postgres-restart",
  what: "the usage ledger's PostgreSQL killed with SIGKILL mid-export, down 5 s, started again (recovered from its WAL)",
  async run(ctx) {
    await backlogExporting(ctx);
    await ctx.chaos.metering.postgres.restart({
      kill: true,
      whileDown: async () => {
        ctx.injected();
        await lasting(5_000);
      },
    });
  },
};

function apiAnswering(name: string, what: string, fault: MarketplaceFault): Fault {
  return {
    name,
    what,
    async run(ctx) {
      const { market } = ctx.chaos.metering;
      await backlogExporting(ctx);
      const requests = market.requests().length;
      const rule = market.faults.add({ fault });
      try {
        ctx.injected();
        await lasting(20_000);
      } finally {
        rule.remove();
      }
      const taken = market
        .requests()
        .slice(requests)
        .filter((r) => r.injected).length;
      ctx.note(`${taken} metering API calls answered by the fault`);
    },
  };
}

export const meteringApi5xx = apiAnswering(
  "metering-api-5xx",
  "the metering API answers 503 to every call for 20 s while a backlog waits",
  { kind: "status", status: 503 },
);

export const meteringApi429 = apiAnswering(
  "metering-api-429",
  "the metering API answers 429 with Retry-After: 5 to every call for 20 s while a backlog waits",
  { kind: "throttle", retryAfterSeconds: 5 },
);

export const operatorsKillBetweenExportAndMark: Fault = {
  name: "operators-kill-export-before-mark",
  what: "the operators killed (SIGKILL at a failpoint) after the metering API accepted a batch, before the ledger marked it; started again",
  async run(ctx) {
    const [slot] = ctx.chaos.operators;
    if (!slot) throw new Error("no operators process");
    await killAt(ctx, [slot], "usage/after-export-before-mark", () =>
      ctx.chaos.metering.seedBacklog(BACKLOG_CLUSTERS),
    );
    await slot.restart();
  },
};

export const meteringFaults: Fault[] = [
  postgresRestart,
  meteringApi5xx,
  meteringApi429,
  operatorsKillBetweenExportAndMark,
];
