import { describe, expect, it } from "vitest";
import type { ManagementCluster } from "../api/v1alpha1/index.ts";
import { mayMakeRoom, place } from "./placement.ts";

function mc(
  name: string,
  max: number,
  labels: Record<string, string> = {},
  schedulable = true,
): ManagementCluster {
  return {
    metadata: { name },
    spec: { consumerName: name, capacity: { maxHostedClusters: max }, labels, schedulable },
  };
}

describe("place", () => {
  it("picks the least loaded by fraction of capacity, then by name", () => {
    const load = new Map([
      ["a", 5],
      ["b", 1],
      ["c", 1],
    ]);
    const got = place([mc("a", 10), mc("c", 2), mc("b", 2)], load);
    expect(got.placed && got.managementCluster.metadata.name).toBe("b");
    expect(place([mc("a", 10), mc("b", 2)], new Map([["a", 1]]))).toMatchObject({ placed: true });
  });

  it("honours the selector and says which selector matched nothing", () => {
    const got = place([mc("a", 10, { tier: "standard" }), mc("b", 10, { tier: "premium" })], new Map(), {
      matchLabels: { tier: "premium" },
    });
    expect(got.placed && got.managementCluster.metadata.name).toBe("b");
    const none = place([mc("a", 10, { tier: "standard" })], new Map(), { matchLabels: { tier: "gold" } });
    expect(none).toMatchObject({ placed: false, reason: "NoMatchingManagementCluster" });
    expect(!none.placed && none.message).toContain("tier=gold");
  });

  it("skips unschedulable clusters and reports full ones with their load", () => {
    expect(place([mc("a", 10, {}, false)], new Map())).toMatchObject({
      placed: false,
      reason: "NoManagementCluster",
    });
    const full = place([mc("a", 1)], new Map([["a", 1]]));
    expect(full).toMatchObject({ placed: false, reason: "NoCapacity" });
    expect(!full.placed && full.message).toContain("a 1/1");
  });

  it("never places on a ManagementCluster being deleted, however empty", () => {
    const going: ManagementCluster = {
      ...mc("a", 10),
      metadata: { name: "a", deletionTimestamp: "2030-01-01T00:00:00Z" },
    };
    expect(place([going], new Map())).toMatchObject({ placed: false, reason: "NoManagementCluster" });
    const got = place([going, mc("b", 10)], new Map([["b", 9]]));
    expect(got.placed && got.managementCluster.metadata.name).toBe("b");
  });

  it("quotes at most 1 KiB of a selector or a load list, so the message stays readable", () => {
    const key = `example.com/${"k".repeat(200 * 1024)}`;
    const none = place([mc("a", 10)], new Map(), { matchLabels: { [key]: "v" } });
    expect(none).toMatchObject({ placed: false, reason: "NoMatchingManagementCluster" });
    const message = none.placed ? "" : none.message;
    expect(message).toContain("placement selector example.com/kkk");
    expect(message).toContain(`[truncated: ${key.length + 2} characters in all]`);
    expect(message.length).toBeLessThan(1200);

    const many = Array.from({ length: 500 }, (_, i) => mc(`management-cluster-${i}`, 1));
    const full = place(many, new Map(many.map((m) => [m.metadata.name!, 1])));
    expect(full).toMatchObject({ placed: false, reason: "NoCapacity" });
    const fullMessage = full.placed ? "" : full.message;
    expect(fullMessage).toMatch(
      /^all 500 matching ManagementClusters are full \(management-cluster-0 1\/1, /,
    );
    expect(fullMessage).toMatch(/characters in all\]\); the cluster is placed when room appears$/);
    expect(fullMessage.length).toBeLessThan(1200);
  });
});

describe("mayMakeRoom", () => {
  const at = (generation: number, hostedClusters: number): ManagementCluster => ({
    ...mc("a", 10),
    metadata: { name: "a", generation },
    status: { hostedClusters },
  });

  it("wakes waiting clusters for a new spec or a lower load", () => {
    expect(mayMakeRoom(at(1, 5), at(2, 5))).toBe(true);
    expect(mayMakeRoom(at(1, 5), at(1, 4))).toBe(true);
    expect(mayMakeRoom({ ...at(1, 0), status: { hostedClusters: 3 } }, { ...at(1, 0), status: {} })).toBe(
      true,
    );
  });

  it("lets a placement, which only raises the load, or a condition refresh pass", () => {
    expect(mayMakeRoom(at(1, 5), at(1, 6))).toBe(false);
    expect(mayMakeRoom(at(1, 5), { ...at(1, 5), status: { hostedClusters: 5, phase: "Ready" } })).toBe(false);
  });
});
