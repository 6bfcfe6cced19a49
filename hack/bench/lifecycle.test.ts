import { describe, expect, it } from "vitest";
import { subscriptionOf } from "./lifecycle.ts";

describe("subscriptionOf", () => {
  it("gives each run of clusters its own subscription, a UUID ARM accepts", () => {
    const subs = Array.from({ length: 25 }, (_, i) => subscriptionOf(i, 10));
    expect(new Set(subs.slice(0, 10)).size).toBe(1);
    expect(new Set(subs).size).toBe(3);
    expect(subscriptionOf(10_000 * 10 - 1, 10)).toBe("00000000-0000-4000-8000-00000000270f");
    for (const s of subs) expect(s).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it("puts every cluster in one subscription when asked for that many", () => {
    expect(subscriptionOf(9_999, 10_000)).toBe(subscriptionOf(0, 10_000));
  });
});
