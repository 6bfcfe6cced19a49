/** The bench runs the operators and agents with the environment their Deployments ship. */
import { describe, expect, it } from "vitest";
import { shippedEnv } from "./components.ts";

describe("shippedEnv", () => {
  it.each(["agent", "operators"] as const)("gives the %s the Deployment's NODE_OPTIONS", (component) => {
    expect(shippedEnv(component)["NODE_OPTIONS"]).toMatch(/--max-semi-space-size=\d+/);
  });
});
