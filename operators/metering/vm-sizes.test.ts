import { describe, expect, it } from "vitest";
import { canonicalDecimal, hourOf } from "./db.ts";
import { nodePoolRate, vcpusOf } from "./vm-sizes.ts";

describe("vCPUs per VM size", () => {
  it("knows the sizes the samples and the ARM emulator offer, in any case", () => {
    expect(vcpusOf("Standard_D8s_v3")).toBe(8);
    expect(vcpusOf("standard_e16ds_v5")).toBe(16);
    expect(nodePoolRate("Standard_D4s_v3", 3)).toBe(12);
    expect(nodePoolRate("Standard_D4s_v3", 0)).toBe(0);
  });

  it("refuses a size it does not know, and a node count that is no count, naming them", () => {
    expect(() => vcpusOf("Standard_X999_v9")).toThrow(/VM size "Standard_X999_v9" has no known vCPU count/);
    expect(() => nodePoolRate("Standard_D4s_v3", 1.5)).toThrow(
      "node count must be a whole number ≥ 0, got 1.5",
    );
  });
});

describe("ledger values", () => {
  it("spells equal decimals one way", () => {
    expect(["016.50", "16.500000", "0.0", "0", "10", "10.000"].map(canonicalDecimal)).toEqual([
      "16.5",
      "16.5",
      "0",
      "0",
      "10",
      "10",
    ]);
  });

  it("truncates to the whole UTC hour", () => {
    expect(hourOf(new Date("2026-03-02T10:59:59.999Z"))).toEqual(new Date("2026-03-02T10:00:00Z"));
    expect(hourOf(new Date("2026-03-02T11:00:00Z"))).toEqual(new Date("2026-03-02T11:00:00Z"));
  });
});
