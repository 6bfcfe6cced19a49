/** The metering invariants: lost and reported-twice hours found, a clean ledger passes. */
import { describe, expect, it } from "vitest";
import type { UsageHour } from "../../operators/metering/ledger.ts";
import type { AcceptedUsageEvent } from "../harness/marketplace-emulator/index.ts";
import { judgeMetering } from "./metering-invariants.ts";

const HOUR = new Date("2026-11-28T10:00:00Z");
const ID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/a";

function row(over: Partial<UsageHour> = {}): UsageHour {
  return {
    id: "1",
    resourceUid: "u1",
    dimension: "controlPlaneHours",
    hourStart: HOUR,
    quantity: "1.000000",
    clusterId: "c1",
    subscriptionId: "s",
    resourceId: ID,
    recordedAt: HOUR,
    state: "reported",
    usageEventId: "e1",
    ...over,
  };
}

function event(over: Partial<AcceptedUsageEvent> = {}): AcceptedUsageEvent {
  return {
    usageEventId: "e1",
    resourceId: ID.toUpperCase(),
    planId: "p",
    dimension: "controlPlaneHours",
    quantity: 1,
    effectiveStartTime: HOUR.toISOString(),
    hour: HOUR.toISOString(),
    messageTime: HOUR.toISOString(),
    requestId: "r1",
    ...over,
  };
}

describe("judgeMetering", () => {
  it("passes a ledger whose reported rows are the API's events, rows of one key summed into one", () => {
    const halves = [
      row({ id: "1", resourceUid: "u1", quantity: "0.400000" }),
      row({ id: "2", resourceUid: "u2", quantity: "0.600000" }),
    ];
    expect(judgeMetering({ rows: halves, accepted: [event()] })).toEqual({
      pending: [],
      lost: [],
      duplicated: [],
    });
  });

  it("waits while hours are unreported", () => {
    const f = judgeMetering({ rows: [row({ state: "unreported", usageEventId: undefined })], accepted: [] });
    expect(f.pending).toEqual(["1 usage hours unreported, the oldest 2026-11-28T10:00:00.000Z"]);
  });

  it("counts as lost an hour rejected, expired, reported without an event, under another ID or quantity", () => {
    expect(
      judgeMetering({ rows: [row({ state: "rejected", reason: "x" })], accepted: [] }).lost,
    ).toHaveLength(1);
    expect(judgeMetering({ rows: [row()], accepted: [] }).lost[0]).toMatch(/holds no event/);
    expect(judgeMetering({ rows: [row()], accepted: [event({ usageEventId: "e2" })] }).lost[0]).toMatch(
      /another event ID/,
    );
    expect(judgeMetering({ rows: [row()], accepted: [event({ quantity: 2 })] }).lost[0]).toMatch(
      /billed as 2/,
    );
  });

  it("counts as reported twice a key accepted twice, and an event no row stands for", () => {
    const twice = judgeMetering({ rows: [row()], accepted: [event(), event({ usageEventId: "e2" })] });
    expect(twice.duplicated).toEqual([expect.stringMatching(/accepted 2 times/)]);
    const stray = judgeMetering({ rows: [], accepted: [event()] });
    expect(stray.duplicated).toEqual([expect.stringMatching(/no ledger row/)]);
  });
});
