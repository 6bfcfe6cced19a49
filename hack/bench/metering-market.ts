/**
 * The metering bench's marketplace emulator, in a process of its own (`node
 * hack/bench/metering-market.ts '<json options>'`): it keeps every event it accepts in memory,
 * which would otherwise count in the memory of the exporter the bench measures. It registers the
 * fleet's N clusters and pools on the plan, answers with its clock fixed at `now`, prints
 * `{"endpoint","caPath","pid"}` as one line on stdout, and stops on SIGTERM.
 */
import { startMarketplaceEmulator } from "../harness/marketplace-emulator/index.ts";
import { DIMENSIONS, fleetCluster, PLAN_ID } from "./metering-fleet.ts";

interface MarketOptions {
  workDir: string;
  n: number;
  now: string;
}

function options(raw: string | undefined): MarketOptions {
  const o = JSON.parse(raw ?? "{}") as Partial<MarketOptions>;
  if (typeof o.workDir !== "string" || !Number.isInteger(o.n) || typeof o.now !== "string")
    throw new Error(`metering-market: options need workDir, n and now, not ${raw ?? "nothing"}`);
  return o as MarketOptions;
}

const opts = options(process.argv[2]);
const now = new Date(opts.now);
const market = await startMarketplaceEmulator({ workDir: opts.workDir, now: () => now });
for (let i = 0; i < opts.n; i++) {
  const c = fleetCluster(i);
  for (const resourceId of [c.clusterResourceId, c.poolResourceId])
    market.register({ resourceId, planId: PLAN_ID, dimensions: [...DIMENSIONS] });
}
process.once("SIGTERM", () => {
  void market.stop().finally(() => process.exit(0));
});
process.stdout.write(
  `${JSON.stringify({ endpoint: market.endpoint, caPath: market.caPath, pid: process.pid })}\n`,
);
