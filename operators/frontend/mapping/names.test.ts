/** CR names derived from ARM names, and the default DNS prefix. */
import { describe, expect, it } from "vitest";
import { clusterCRName, defaultDnsPrefix, nodePoolCRName } from "./names.ts";

describe("names", () => {
  it("derives DNS-label CR names, stable and distinct per resource group, case-insensitive", () => {
    const long = "A".repeat(54);
    const name = clusterCRName("rg", long);
    expect(name.length).toBeLessThanOrEqual(54);
    expect(name).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
    expect(clusterCRName("RG", "Demo")).toBe(clusterCRName("rg", "demo"));
    expect(clusterCRName("rg1", "demo")).not.toBe(clusterCRName("rg2", "demo"));
    expect(nodePoolCRName("rg", "demo", "Workers-")).toMatch(/^workers-[0-9a-f]{8}$/);
  });

  it("draws a default DNS prefix no name can steer: a DNS label of 15 characters, 10 of them random", () => {
    const drawn = new Set<string>();
    for (const name of ["a-very-long-cluster-name", "A", "ab-", "Demo"])
      for (let i = 0; i < 200; i++) {
        const prefix = defaultDnsPrefix(name);
        expect(prefix.length).toBeLessThanOrEqual(15);
        expect(prefix).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?-[a-z0-9]{10}$/);
        drawn.add(prefix);
      }
    // The same name twice gets two prefixes: nothing about the name decides the suffix.
    expect(drawn.size).toBe(800);
  });
});
