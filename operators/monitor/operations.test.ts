import { describe, expect, it } from "vitest";
import type { Condition } from "../runtime/conditions.ts";
import { isStale, operationOf, operationStats, UnreconciledAges, type Tracked } from "./operations.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

function cond(type: string, status: Condition["status"], reason: string, at = 0): Condition {
  return { type, status, reason, message: "", lastTransitionTime: iso(at) };
}

function obj(
  extra: {
    deletedAt?: number;
    version?: string;
    conditions?: Condition[];
    generation?: number;
    observed?: number;
  } = {},
): Tracked {
  return {
    metadata: {
      name: "c",
      uid: "u-1",
      creationTimestamp: iso(0),
      generation: extra.generation ?? 1,
      ...(extra.deletedAt === undefined ? {} : { deletionTimestamp: iso(extra.deletedAt) }),
    },
    status: {
      ...(extra.version ? { version: extra.version } : {}),
      conditions: extra.conditions ?? [],
      ...(extra.observed === undefined ? {} : { observedGeneration: extra.observed }),
    },
  };
}

describe("operationOf", () => {
  it.each<{ name: string; o: Tracked; want: ReturnType<typeof operationOf> }>([
    { name: "a new cluster", o: obj(), want: { operation: "create", sinceMs: T0 } },
    { name: "an installed cluster", o: obj({ version: "4.19.7" }), want: undefined },
    {
      name: "an upgrade",
      o: obj({ version: "4.19.7", conditions: [cond("Progressing", "True", "Upgrading", 600)] }),
      want: { operation: "upgrade", sinceMs: T0 + 600_000 },
    },
    {
      name: "a deletion, whatever else",
      o: obj({ deletedAt: 900, conditions: [cond("Progressing", "True", "Upgrading", 600)] }),
      want: { operation: "delete", sinceMs: T0 + 900_000 },
    },
    {
      name: "a create waiting for the user",
      o: obj({ conditions: [cond("Progressing", "False", "UserActionRequired")] }),
      want: undefined,
    },
    {
      name: "a create held by a step",
      o: obj({ conditions: [cond("Progressing", "True", "InProgress")] }),
      want: { operation: "create", sinceMs: T0 },
    },
  ])("$name", ({ o, want }) => {
    expect(operationOf(o)).toEqual(want);
  });
});

describe("operationStats", () => {
  it("counts each operation and ages its oldest", () => {
    const objects = [
      obj(),
      { ...obj(), metadata: { ...obj().metadata, creationTimestamp: iso(100) } },
      obj({ deletedAt: 50 }),
      obj({ version: "4.19.7" }),
    ];
    expect(operationStats(objects, T0 + 1_000_000)).toEqual({
      create: { count: 2, oldestSeconds: 1000 },
      upgrade: { count: 0, oldestSeconds: 0 },
      delete: { count: 1, oldestSeconds: 950 },
    });
  });
});

describe("isStale", () => {
  it("is true for a Ready that is StatusStale only", () => {
    expect(isStale(obj({ conditions: [cond("Ready", "Unknown", "StatusStale")] }))).toBe(true);
    expect(isStale(obj({ conditions: [cond("Ready", "True", "AsExpected")] }))).toBe(false);
    expect(isStale(obj())).toBe(false);
  });
});

describe("UnreconciledAges", () => {
  function ages() {
    let t = T0 + 60_000;
    const a = new UnreconciledAges<Tracked>(
      (o) => o.status?.observedGeneration,
      () => t,
    );
    return { a, advance: (ms: number) => (t += ms) };
  }

  it("ages a first generation from the object's creation, and forgets it once observed", () => {
    const { a } = ages();
    a.observe(obj());
    expect(a.oldestSeconds()).toBe(60);
    a.observe(obj({ observed: 1 }));
    expect(a.oldestSeconds()).toBe(0);
    expect(a.size).toBe(0);
  });

  it("ages a later generation from when it was first seen, not again at each event", () => {
    const { a, advance } = ages();
    a.observe(obj({ generation: 2, observed: 1 }));
    advance(30_000);
    a.observe(obj({ generation: 2, observed: 1 }));
    expect(a.oldestSeconds()).toBe(30);
    a.observe(obj({ generation: 3, observed: 1 }));
    expect(a.oldestSeconds()).toBe(0);
  });

  it("ages a later hop from when the hop before it handed the generation over, not from creation", () => {
    let t = T0 + 60_000;
    // The agent's hop: owes what was published (here: a condition's generation), acts by applying.
    const generationOf = (type: string) => (o: Tracked) =>
      o.status?.conditions?.find((c) => c.type === type)?.observedGeneration;
    const a = new UnreconciledAges<Tracked>(generationOf("Applied"), () => t, generationOf("Published"));
    const published = (g: number): Condition => ({
      ...cond("Published", "True", "Published"),
      observedGeneration: g,
    });
    const applied = (g: number): Condition => ({
      ...cond("Applied", "True", "Applied"),
      observedGeneration: g,
    });
    a.observe(obj());
    expect(a.size).toBe(0);
    a.observe(obj({ conditions: [published(1)] }));
    t += 5_000;
    expect(a.oldestSeconds()).toBe(5);
    a.observe(obj({ conditions: [published(1), applied(1)] }));
    expect(a.size).toBe(0);
    a.observe(obj({ generation: 2, conditions: [published(1), applied(1)] }));
    expect(a.size).toBe(0);
  });

  it("forgets a deleted object", () => {
    const { a } = ages();
    a.observe(obj());
    a.forget(obj());
    expect(a.size).toBe(0);
  });
});
