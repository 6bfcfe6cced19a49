/**
 * The pure parts of the metering client: what a batch must be before it is sent, splitting into
 * batches, and the AWS BatchMeterUsage rendering (whole units, the 6-hour lateness, the customer
 * field). The client's calls are tested against the marketplace emulator
 * (hack/harness/marketplace-emulator/marketplace.test.ts).
 */
import { describe, expect, it } from "vitest";
import {
  batchesOf,
  checkBatch,
  MarketplaceMeteringClient,
  toBatchMeterUsage,
  usageKey,
  type UsageEvent,
} from "./marketplace.ts";

const event = (over: Partial<UsageEvent> = {}): UsageEvent => ({
  resourceId: "0f6c5a3e-1d2b-4c8e-9a7f-3b2d1e0c9a81",
  planId: "hcp-standard",
  dimension: "vcpu-hours",
  quantity: 8,
  hour: new Date("2026-11-28T14:00:00Z"),
  ...over,
});

describe("checkBatch", () => {
  it("takes 1 to 25 events and names the bad field and index", () => {
    expect(() => checkBatch([event()])).not.toThrow();
    expect(() => checkBatch([])).toThrow(/at least one event/);
    const hours = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        event({ hour: new Date(Date.UTC(2026, 10, 28, 0) - i * 3600_000) }),
      );
    expect(() => checkBatch(hours(25))).not.toThrow();
    expect(() => checkBatch(hours(26))).toThrow(/at most 25 events, not 26/);
    expect(() => checkBatch([event(), event({ dimension: "x", quantity: 0 })])).toThrow(
      /events\[1\]\.quantity must be a finite number > 0, not 0/,
    );
    expect(() => checkBatch([event({ quantity: Number.NaN })])).toThrow(/events\[0\]\.quantity/);
    expect(() => checkBatch([event({ planId: " " })])).toThrow(/events\[0\]\.planId/);
    expect(() => checkBatch([event({ hour: new Date("no") })])).toThrow(/events\[0\]\.hour/);
  });

  it("refuses two events of one resource, dimension and hour (minutes and case do not make them differ)", () => {
    const a = event();
    const b = event({ resourceId: a.resourceId.toUpperCase(), hour: new Date("2026-11-28T14:59:00Z") });
    expect(usageKey(a)).toBe(usageKey(b));
    expect(() => checkBatch([a, b])).toThrow(
      /events\[1\] has the resource, dimension and hour of events\[0\]/,
    );
    expect(() => checkBatch([a, event({ dimension: "controlplane-hours" })])).not.toThrow();
  });
});

describe("batchesOf", () => {
  it("splits into batches of 25 and keeps the order", () => {
    const items = Array.from({ length: 53 }, (_, i) => i);
    const batches = batchesOf(items);
    expect(batches.map((b) => b.length)).toEqual([25, 25, 3]);
    expect(batches.flat()).toEqual(items);
    expect(batchesOf([])).toEqual([]);
  });
});

describe("toBatchMeterUsage", () => {
  const now = new Date("2026-11-28T15:20:00Z");
  const customerOf = (e: UsageEvent) => ({ CustomerIdentifier: `cust-${e.resourceId.slice(0, 4)}` });

  it("renders the request AWS takes: the hour in epoch seconds, whole quantities, the customer", () => {
    const { request, late } = toBatchMeterUsage(
      [
        event(),
        event({ dimension: "controlplane-hours", quantity: 1, hour: new Date("2026-11-28T10:00:00Z") }),
      ],
      { productCode: "hcp-aws", customerOf, now },
    );
    expect(late).toEqual([]);
    expect(request).toEqual({
      ProductCode: "hcp-aws",
      UsageRecords: [
        { CustomerIdentifier: "cust-0f6c", Timestamp: 1_795_874_400, Dimension: "vcpu-hours", Quantity: 8 },
        {
          CustomerIdentifier: "cust-0f6c",
          Timestamp: 1_795_860_000,
          Dimension: "controlplane-hours",
          Quantity: 1,
        },
      ],
    });
    expect(new Date(request.UsageRecords[0]!.Timestamp * 1000).toISOString()).toBe(
      "2026-11-28T14:00:00.000Z",
    );
  });

  it("leaves out and lists events 6 hours old or more; takes an account ID as the customer", () => {
    const old = event({ hour: new Date("2026-11-28T09:00:00Z") });
    const { request, late } = toBatchMeterUsage([event(), old], {
      productCode: "hcp-aws",
      customerOf: () => ({ CustomerAWSAccountID: "123456789012" }),
      now,
    });
    expect(late).toEqual([old]);
    expect(request.UsageRecords).toEqual([
      {
        CustomerAWSAccountID: "123456789012",
        Timestamp: 1_795_874_400,
        Dimension: "vcpu-hours",
        Quantity: 8,
      },
    ]);
  });

  it("refuses a fractional quantity, more than 25 events and an empty product code", () => {
    expect(() =>
      toBatchMeterUsage([event(), event({ dimension: "x", quantity: 2.5 })], {
        productCode: "p",
        customerOf,
        now,
      }),
    ).toThrow(/events\[1\]\.quantity 2\.5 is not a whole number/);
    expect(() => toBatchMeterUsage([event()], { productCode: " ", customerOf, now })).toThrow(/productCode/);
    const many = Array.from({ length: 26 }, (_, i) =>
      event({ hour: new Date(now.getTime() - i * 3600_000) }),
    );
    expect(() => toBatchMeterUsage(many, { productCode: "p", customerOf, now })).toThrow(/at most 25/);
  });
});

describe("MarketplaceMeteringClient", () => {
  it("refuses an endpoint that is not https", () => {
    const credential = { getToken: () => Promise.resolve(null) };
    expect(() => new MarketplaceMeteringClient({ credential, endpoint: "http://127.0.0.1:1" })).toThrow(
      /must be https/,
    );
  });
});
