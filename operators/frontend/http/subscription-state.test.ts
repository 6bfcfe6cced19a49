import { describe, expect, it } from "vitest";
import { CloudError } from "../errors.ts";
import type { Subscription, SubscriptionState } from "../handlers/subscriptions.ts";
import { PATTERNS, route } from "./routes.ts";
import { subscriptionFor } from "./subscription-state.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
const checked = route({ pattern: PATTERNS.cluster, methods: {} });
const own = route({ pattern: PATTERNS.subscription, checkSubscription: false, methods: {} });

const storeWith = (state?: SubscriptionState) => ({
  get: (): Promise<Subscription | undefined> =>
    Promise.resolve(state ? { state, registrationDate: "2026-01-01T00:00:00Z" } : undefined),
});

async function statusOf(state: SubscriptionState | undefined, method: string): Promise<number> {
  try {
    await subscriptionFor(checked, SUB, method, storeWith(state));
    return 200;
  } catch (err) {
    return err instanceof CloudError ? err.status : 500;
  }
}

describe("subscription state", () => {
  it("hands a registered subscription to the handler", async () => {
    expect((await subscriptionFor(checked, SUB, "PUT", storeWith("Registered")))?.state).toBe("Registered");
  });

  it("refuses unknown, unregistered and deleted subscriptions (400), and changes in Warned or Suspended ones (409)", async () => {
    expect(await statusOf(undefined, "GET")).toBe(400);
    expect(await statusOf("Unregistered", "GET")).toBe(400);
    expect(await statusOf("Deleted", "DELETE")).toBe(400);
    for (const state of ["Warned", "Suspended"] as const) {
      expect(await statusOf(state, "GET")).toBe(200);
      expect(await statusOf(state, "DELETE")).toBe(200);
      expect(await statusOf(state, "PUT")).toBe(409);
      expect(await statusOf(state, "POST")).toBe(409);
    }
  });

  it("checks nothing on the subscription's own route", async () => {
    expect(await subscriptionFor(own, SUB, "PUT", storeWith(undefined))).toBeUndefined();
  });
});
