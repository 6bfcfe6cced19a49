/**
 * Metering in the chaos region (issue 35): the region's PostgreSQL holds the usage ledger, the
 * marketplace emulator takes the usage (any resource, on the chaos plan), and the operators run
 * the recorder and the exporter with --metering-*, exporting every 2 s. A run lasts minutes, so no
 * hour of its own clusters completes; `seedBacklog` writes complete past hours of clusters made up
 * for the purpose through the Ledger API (as late usage arrives), which the operators' exporter
 * then reports under the fault. The world read for the verdict is every hourly row of the ledger
 * beside every event the emulator accepted (metering-invariants.ts).
 */
import { randomUUID } from "node:crypto";
import { Ledger, type UsageHour } from "../../operators/metering/ledger.ts";
import { DIMENSIONS } from "../../operators/metering/segments.ts";
import { nodePoolRate } from "../../operators/metering/vm-sizes.ts";
import type { ArmEmulator } from "../harness/arm-emulator/index.ts";
import { startMarketplaceEmulator, type MarketplaceEmulator } from "../harness/marketplace-emulator/index.ts";
import type { Postgres } from "../harness/postgres.ts";
import type { MeteringWorld } from "./metering-invariants.ts";

const PLAN = "hcp-chaos";
const HOUR = 3_600_000;
const SUBSCRIPTION = "0c8f4a52-6a7e-4a5e-9d6b-1f0e2c3d4b5a";

export interface ChaosMetering {
  postgres: Postgres;
  market: MarketplaceEmulator;
  /** The operators' --metering-* flags. */
  flags: string[];
  /**
   * Writes `clusters` clusters made up for the purpose, each with a control plane and an 8-vCPU
   * pool metered over the three complete hours before now: 6 rows each at the next roll-up.
   */
  seedBacklog(clusters: number): Promise<number>;
  world(): Promise<MeteringWorld>;
  stop(): Promise<void>;
}

export async function startChaosMetering(
  postgres: Postgres,
  arm: Pick<ArmEmulator, "verifyBearer">,
  workDir: string,
): Promise<ChaosMetering> {
  const market = await startMarketplaceEmulator({
    workDir,
    verifyBearer: arm.verifyBearer,
    registerUnknown: { planId: PLAN, dimensions: [...DIMENSIONS] },
  });
  // The chaos process's own ledger, for seeding and reading; the operators open theirs.
  const ledger = await Ledger.open(postgres.url, { onConnectionError: () => undefined });
  const flags = [
    `--metering-database-url=${postgres.url}`,
    `--metering-endpoint=${market.endpoint}`,
    `--metering-ca=${market.caPath}`,
    `--metering-plan-id=${PLAN}`,
    "--metering-interval-seconds=2",
  ];
  return {
    postgres,
    market,
    flags,
    async seedBacklog(clusters) {
      const start = new Date(Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR);
      const end = new Date(start.getTime() + 3 * HOUR);
      for (let i = 0; i < clusters; i++) {
        const clusterId = randomUUID();
        const resourceId = `/subscriptions/${SUBSCRIPTION}/resourceGroups/chaos/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/backlog-${clusterId.slice(0, 8)}`;
        await ledger.recordCluster({
          clusterId,
          resourceId,
          subscriptionId: SUBSCRIPTION,
          location: "westeurope",
          createdAt: start,
        });
        await ledger.recordFirstSucceeded(clusterId, start);
        const base = { clusterId, at: start };
        await ledger.observe({
          ...base,
          resourceUid: clusterId,
          resourceId,
          dimension: "controlPlaneHours",
          rate: 1,
        });
        await ledger.observe({
          ...base,
          resourceUid: randomUUID(),
          resourceId: `${resourceId}/nodePools/workers`,
          dimension: "vCPUHours",
          rate: nodePoolRate("Standard_D8s_v3", 1),
        });
        await ledger.recordDeleted(clusterId, end);
      }
      return clusters * 6;
    },
    async world() {
      const rows: UsageHour[] = [];
      for await (const batch of ledger.usageRows(
        { from: new Date(0), to: new Date(Date.now() + HOUR) },
        1_000,
      ))
        rows.push(...batch);
      return { rows, accepted: market.accepted() };
    },
    async stop() {
      await ledger.close();
      await market.stop();
    },
  };
}
