import { describe, expect, it } from "vitest";
import { halfMachineRate } from "./half-machine-rate.ts";

describe("halfMachineRate", () => {
  it("divides half the cores, less the idle use, by the costliest phase's mean per request", () => {
    const choice = halfMachineRate(2, 0.05, [
      { name: "creates", cpuMsPerRequest: { put: 10, floor: 8 } },
      { name: "reads", cpuMsPerRequest: { get: 1.5, floor: 1 } },
    ]);
    // (1 - 0.05) cores / 9 ms = 105.6/s, rounded down.
    expect(choice).toEqual({ rate: 105, budgetCores: 0.95, limiting: "creates", limitingMs: 9 });
  });

  it("refuses when the apiserver already idles at half the machine or nothing was measured", () => {
    expect(() => halfMachineRate(2, 1, [{ name: "c", cpuMsPerRequest: { a: 1 } }])).toThrow(/idles/);
    expect(() => halfMachineRate(2, 0, [{ name: "c", cpuMsPerRequest: { a: 0 } }])).toThrow(
      /no apiserver CPU/,
    );
  });

  it("never goes below one request per second", () => {
    expect(halfMachineRate(2, 0, [{ name: "c", cpuMsPerRequest: { a: 5000 } }]).rate).toBe(1);
  });
});
