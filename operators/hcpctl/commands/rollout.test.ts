import { describe, expect, it } from "vitest";
import type { Rollout } from "../../api/v1alpha1/index.ts";
import { CliError } from "../errors.ts";
import { rolloutFromFlags, type RolloutStartFlags } from "./rollout.ts";
import { wavesToDetail } from "./rollout-status.ts";

const flags = (more: Partial<RolloutStartFlags>): RolloutStartFlags => ({ urgent: false, ...more });

describe("rolloutFromFlags", () => {
  it("builds a release rollout with its waves, budget and concurrency", () => {
    const r = rolloutFromFlags(
      "r419",
      flags({
        release: "4.19.10",
        selector: "env=prod",
        canary: "2",
        growth: "3",
        maxWave: "50",
        failureBudget: "1",
        maxPerManagementCluster: "4",
        urgent: true,
      }),
    );
    expect(r.spec).toEqual({
      release: { version: "4.19.10" },
      clusters: { selector: { matchLabels: { env: "prod" } } },
      waves: { canary: 2, growth: 3, maxSize: 50 },
      failureBudget: { maxFailedPerWave: 1 },
      maxConcurrentPerManagementCluster: 4,
      urgency: "Urgent",
    });
  });

  it("rolls a task by its type", () => {
    const r = rolloutFromFlags("rot", flags({ task: "rotateserviceaccountsigningkey", clusters: "a/b" }));
    expect(r.spec.task).toBe("RotateServiceAccountSigningKey");
    expect(r.spec.release).toBeUndefined();
  });

  it.each([
    ["r", flags({ clusters: "a/b" }), "--release VERSION"],
    ["r", flags({ release: "4.19.1", task: "RotateServiceAccountSigningKey", clusters: "a/b" }), "--task"],
    ["r", flags({ task: "UpgradeControlPlane", clusters: "a/b" }), "--release"],
    ["r", flags({ release: "4.19.1" }), "--clusters"],
    ["r", flags({ release: "4.19.1", clusters: "a/b", canary: "0" }), "--canary"],
    ["r", flags({ release: "4.19.1", clusters: "a/b", growth: "1.5" }), "--growth"],
    ["r", flags({ release: "4.19.1", clusters: "a/b", growth: "11" }), "--growth"],
    ["r", flags({ release: "4.19.1", clusters: "a/b", canary: "5", maxWave: "4" }), "--max-wave"],
    ["r", flags({ release: "4.19.1", clusters: "a/b", failureBudget: "-1" }), "--failure-budget"],
    ["x".repeat(64), flags({ release: "4.19.1", clusters: "a/b" }), "NAME"],
    ["Bad_Name", flags({ release: "4.19.1", clusters: "a/b" }), "NAME"],
  ])("refuses %s with %j, naming %s", (name, f, named) => {
    expect(() => rolloutFromFlags(name, f)).toThrow(CliError);
    expect(() => rolloutFromFlags(name, f)).toThrow(named);
  });
});

describe("wavesToDetail", () => {
  it("is the current wave and any wave with failed or timed-out runs", () => {
    const rollout: Rollout = {
      metadata: { name: "r" },
      spec: { release: { version: "4.19.10" }, clusters: { names: ["a/b"] } },
      status: {
        currentWave: 3,
        waves: [
          { index: 1, task: "w1", clusters: 1, runs: { Succeeded: 1 }, state: "Succeeded" },
          {
            index: 2,
            task: "w2",
            clusters: 2,
            runs: { Succeeded: 1, TimedOut: 1 },
            state: "FailuresAccepted",
          },
          { index: 3, task: "w3", clusters: 4, runs: { Running: 4 }, state: "Progressing" },
        ],
      },
    };
    expect(wavesToDetail(rollout).map((w) => w.index)).toEqual([2, 3]);
  });
});
