import { describe, expect, it } from "vitest";
import type { UsageHour } from "../../metering/usage.ts";
import { toJson } from "../output.ts";
import { hourData, hoursStream, namesOf } from "./usage-render.ts";

const period = { from: new Date("2026-05-01T00:00:00Z"), to: new Date("2026-06-01T00:00:00Z") };
const ID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/demo";

function hour(i: number, extra: Partial<UsageHour> = {}): UsageHour {
  return {
    id: String(i),
    resourceUid: "u",
    dimension: "controlPlaneHours",
    hourStart: new Date(period.from.getTime() + i * 3_600_000),
    quantity: "1.000000",
    clusterId: "c",
    subscriptionId: "s",
    resourceId: ID,
    recordedAt: new Date("2026-06-01T00:00:00Z"),
    state: "unreported",
    ...extra,
  };
}

function streamed(format: "json" | "table", batches: UsageHour[][]): string {
  const s = hoursStream(format, { period, subscriptionColumn: false });
  return s.head() + batches.map((b) => s.batch(b)).join("") + s.tail();
}

describe("the hourly rows streamed", () => {
  it("as JSON, byte for byte what the whole document prints, for none, one and several batches", () => {
    const doc = (rows: UsageHour[]): string =>
      toJson({ from: period.from.toISOString(), to: period.to.toISOString(), items: rows.map(hourData) });
    expect(streamed("json", [])).toBe(doc([]));
    expect(streamed("json", [[hour(0)]])).toBe(doc([hour(0)]));
    const rows = [hour(0), hour(1, { state: "rejected", reason: 'said "no"' }), hour(2)];
    expect(streamed("json", [rows.slice(0, 2), rows.slice(2)])).toBe(doc(rows));
  });

  it("as a table, aligned by the header and the first batch", () => {
    const pool = hour(1, {
      resourceId: `${ID}/nodePools/workers`,
      dimension: "vCPUHours",
      quantity: "16.500000",
    });
    expect(streamed("table", [[hour(0)], [pool]])).toBe(
      [
        "HOUR                CLUSTER   POOL   DIMENSION           QUANTITY   STATE        REASON",
        "2026-05-01T00:00Z   demo      -      controlPlaneHours   1          unreported",
        "2026-05-01T01:00Z   demo      workers   vCPUHours           16.5       unreported",
        "",
      ].join("\n"),
    );
  });

  it("names the cluster and pool of an ARM ID, and keeps an ID it cannot read", () => {
    expect(namesOf(`${ID}/nodePools/workers`)).toEqual({ cluster: "demo", pool: "workers" });
    expect(namesOf("not-an-arm-id")).toEqual({ cluster: "not-an-arm-id" });
  });
});
