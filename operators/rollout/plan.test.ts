/**
 * The wave plan: sizes (canary, growth, maxSize), and that waves begun one after another from
 * the clusters named at each start cover every cluster exactly once, in order, whatever the
 * plan, including clusters that appear or go between waves.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { FakeLister } from "../../test/support/lister.ts";
import { namedClusters, nextWaveMembers, resolveWaves, waveSize } from "./plan.ts";

describe("waveSize", () => {
  it.each([
    [{}, [1, 2, 4, 8, 16]],
    [{ canary: 2, growth: 3 }, [2, 6, 18, 54, 162]],
    [{ canary: 1, growth: 2, maxSize: 5 }, [1, 2, 4, 5, 5]],
    [{ canary: 3, growth: 1 }, [3, 3, 3, 3, 3]],
  ])("%j gives waves of %j", (waves, sizes) => {
    const plan = resolveWaves(waves);
    expect([1, 2, 3, 4, 5].map((i) => waveSize(plan, i))).toEqual(sizes);
  });

  it("never exceeds the 1000 names a MaintenanceTask holds, however long the rollout", () => {
    expect(waveSize(resolveWaves({ growth: 10 }), 40)).toBe(1000);
  });

  it("refuses a wave index below 1", () => {
    expect(() => waveSize(resolveWaves({}), 0)).toThrow(RangeError);
  });
});

const planArb = fc.record({
  canary: fc.integer({ min: 1, max: 6 }),
  growth: fc.integer({ min: 1, max: 4 }),
  maxSize: fc.option(fc.integer({ min: 6, max: 12 }), { nil: undefined }),
});

describe("nextWaveMembers", () => {
  it("covers every cluster exactly once, each wave its planned size but the last", () => {
    fc.assert(
      fc.property(
        planArb,
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 60 }),
        (waves, names) => {
          const plan = resolveWaves(waves);
          const candidates = [...names].sort();
          const earlier = new Set<string>();
          const sizes: number[] = [];
          for (let index = 1; ; index++) {
            const members = nextWaveMembers(candidates, earlier, plan, index);
            if (members.length === 0) break;
            for (const m of members) {
              expect(earlier.has(m), `${m} is in two waves`).toBe(false);
              earlier.add(m);
            }
            sizes.push(members.length);
            if (earlier.size < candidates.length) expect(members.length).toBe(waveSize(plan, index));
          }
          expect([...earlier].sort()).toEqual(candidates);
          expect(sizes.reduce((a, b) => a + b, 0)).toBe(candidates.length);
        },
      ),
    );
  });

  it("never takes a cluster an earlier wave holds, even when the named set changes between waves", () => {
    fc.assert(
      fc.property(
        planArb,
        fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 30 }), {
          minLength: 1,
          maxLength: 6,
        }),
        (waves, namedAtEachStart) => {
          const plan = resolveWaves(waves);
          const earlier = new Set<string>();
          namedAtEachStart.forEach((named, i) => {
            const candidates = named.map((n) => `ns/c${String(n).padStart(2, "0")}`).sort();
            const free = candidates.filter((c) => !earlier.has(c));
            const members = nextWaveMembers(candidates, earlier, plan, i + 1);
            // The first free clusters in order: the same choice on every reconcile and after a restart.
            expect(members).toEqual(free.slice(0, waveSize(plan, i + 1)));
            for (const m of members) earlier.add(m);
          });
        },
      ),
    );
  });
});

function cluster(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  deleting = false,
): HcpCluster {
  return {
    metadata: { namespace, name, labels, ...(deleting ? { deletionTimestamp: "2026-06-01T00:00:00Z" } : {}) },
    spec: {},
  } as unknown as HcpCluster;
}

describe("namedClusters", () => {
  const clusters = new FakeLister<HcpCluster>([
    cluster("b", "x", { fleet: "prod" }),
    cluster("a", "y", { fleet: "prod", ring: "0" }),
    cluster("a", "x", { fleet: "prod" }),
    cluster("a", "z", { fleet: "dev" }),
    cluster("c", "gone", { fleet: "prod" }, true),
  ]);

  it("sorts what a selector matches and leaves out clusters being deleted", () => {
    expect(namedClusters({ selector: { matchLabels: { fleet: "prod" } } }, clusters)).toEqual({
      candidates: ["a/x", "a/y", "b/x"],
      missing: [],
    });
    expect(
      namedClusters({ selector: { matchExpressions: [{ key: "ring", operator: "DoesNotExist" }] } }, clusters)
        .candidates,
    ).toEqual(["a/x", "a/z", "b/x"]);
  });

  it("reports names that name no cluster", () => {
    expect(namedClusters({ names: ["b/x", "a/nope", "a/x"] }, clusters)).toEqual({
      candidates: ["a/x", "b/x"],
      missing: ["a/nope"],
    });
  });
});
