import { describe, expect, it, vi } from "vitest";
import { SnowflakeGenerator, isNewerSequence, parseSnowflake } from "./snowflake.ts";
import { canonicalJson, statusHash } from "./statushash.ts";

describe("snowflake sequence IDs", () => {
  it("decode Maestro's captured example as node 1", () => {
    const parts = parseSnowflake("2000808179721572352");
    expect(new Date(parts.timeMs).toISOString()).toBe("2025-12-16T06:00:17.921Z");
    expect(parts).toMatchObject({ node: 1, step: 0 });
  });

  it("do not follow a wall-clock jump after the generator started", () => {
    const realNow = Date.now.bind(Date);
    let jumpMs = 0;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => realNow() + jumpMs);
    try {
      const gen = new SnowflakeGenerator(1);
      const before = parseSnowflake(gen.next()).timeMs;
      jumpMs = Date.parse("2100-01-01T00:00:00Z") - realNow();
      expect(parseSnowflake(gen.next()).timeMs - before).toBeLessThan(60_000);
    } finally {
      clock.mockRestore();
    }
  });

  it("grow strictly, within a millisecond and when the clock steps back", () => {
    let now = 1_800_000_000_000;
    const gen = new SnowflakeGenerator(1, () => now);
    const a = gen.next();
    const b = gen.next();
    now -= 5;
    const c = gen.next();
    expect(parseSnowflake(b)).toMatchObject({ node: 1, step: 1 });
    expect(isNewerSequence(b, a)).toBe(true);
    expect(isNewerSequence(c, b)).toBe(true);
    expect(isNewerSequence(a, b)).toBe(false);
    expect(isNewerSequence(a, a)).toBe(false);
    expect(isNewerSequence(a, undefined)).toBe(true);
  });

  it("cannot order IDs from different nodes", () => {
    const other = new SnowflakeGenerator(2).next();
    expect(() => isNewerSequence(other, new SnowflakeGenerator(1).next())).toThrow(/different nodes/);
  });
});

describe("status hash", () => {
  it("ignores key order and sees value changes", () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { f: 1, e: 2 }] } })).toBe(
      '{"a":{"c":[3,{"e":2,"f":1}],"d":2},"b":1}',
    );
    expect(statusHash({ a: 1, b: 2 })).toBe(statusHash({ b: 2, a: 1 }));
    expect(statusHash({ a: 1 })).not.toBe(statusHash({ a: 2 }));
    expect(statusHash(undefined)).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});
