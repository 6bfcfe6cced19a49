import { describe, expect, it } from "vitest";
import type { MaintenanceRun } from "../../api/v1alpha1/index.ts";
import { KubeApiError } from "../../runtime/kube.ts";
import { CliError } from "../errors.ts";
import { TASK_FLAGS, taskFromFlags, type MaintenanceRunFlags } from "./maintenance.ts";
import { currentStep, runMessage, runsByPhase } from "./maintenance-render.ts";
import { parseSelector, refusalOf } from "./maintenance-spec.ts";

const flags = (more: Partial<MaintenanceRunFlags>): MaintenanceRunFlags => ({ urgent: false, ...more });

describe("taskFromFlags", () => {
  it("builds an UpgradeControlPlane task from its flags", () => {
    const task = taskFromFlags(
      "upgradecontrolplane",
      flags({
        clusters: "a/one, b/two",
        release: "4.19.10",
        urgent: true,
        notBefore: "2026-11-28T22:00:00Z",
        notAfter: "2026-11-29T06:00:00+01:00",
        maxPerManagementCluster: "3",
      }),
      "abc123",
    );
    expect(task.metadata.name).toBe("upgrade-4-19-10-abc123");
    expect(task.spec).toEqual({
      task: "UpgradeControlPlane",
      release: { version: "4.19.10" },
      clusters: { names: ["a/one", "b/two"] },
      notBefore: "2026-11-28T22:00:00Z",
      notAfter: "2026-11-29T06:00:00+01:00",
      urgency: "Urgent",
      maxConcurrentPerManagementCluster: 3,
    });
  });

  it("takes a selector of equalities as matchLabels", () => {
    const task = taskFromFlags(
      "RotateServiceAccountSigningKey",
      flags({ selector: "env=prod,tier==gold", name: "rotate-prod" }),
      "x",
    );
    expect(task.metadata.name).toBe("rotate-prod");
    expect(task.spec.clusters).toEqual({ selector: { matchLabels: { env: "prod", tier: "gold" } } });
    expect(task.spec.urgency).toBe("Normal");
  });

  it.each([
    ["Reticulate", flags({ clusters: "a/b" }), "task type"],
    ["RotateServiceAccountSigningKey", flags({}), "--clusters"],
    ["RotateServiceAccountSigningKey", flags({ clusters: "a/b", selector: "x=y" }), "--selector"],
    ["RotateServiceAccountSigningKey", flags({ clusters: "a" }), "--clusters"],
    ["RotateServiceAccountSigningKey", flags({ clusters: "a/b,a/b" }), "--clusters"],
    ["RotateServiceAccountSigningKey", flags({ selector: "env!=prod" }), "--selector"],
    ["RotateServiceAccountSigningKey", flags({ clusters: "a/b", release: "4.19.1" }), "--release"],
    ["UpgradeControlPlane", flags({ clusters: "a/b" }), "--release"],
    ["UpgradeControlPlane", flags({ clusters: "a/b", release: "4.19" }), "--release"],
    ["RotateServiceAccountSigningKey", flags({ clusters: "a/b", notBefore: "tomorrow" }), "--not-before"],
    [
      "RotateServiceAccountSigningKey",
      flags({ clusters: "a/b", notBefore: "2026-11-28T22:00:00Z", notAfter: "2026-11-28T21:00:00Z" }),
      "--not-after",
    ],
    ["RotateServiceAccountSigningKey", flags({ clusters: "a/b", maxPerManagementCluster: "0" }), "--max-per"],
    [
      "RotateServiceAccountSigningKey",
      flags({ clusters: "a/b", maxPerManagementCluster: "1.5" }),
      "--max-per",
    ],
    ["RotateServiceAccountSigningKey", flags({ clusters: "a/b", name: "Not_A_Name" }), "--name"],
  ])("refuses %s with %j, naming %s", (type, f, named) => {
    expect(() => taskFromFlags(type, f, "x")).toThrow(CliError);
    expect(() => taskFromFlags(type, f, "x")).toThrow(named);
  });
});

describe("parseSelector", () => {
  it("refuses a key given twice and set-based terms", () => {
    expect(() => parseSelector("a=1,a=2")).toThrow("twice");
    expect(() => parseSelector("env in (a,b)")).toThrow("--selector");
  });
});

describe("refusalOf", () => {
  const status = (causes: Array<{ field?: string; message?: string }>) =>
    new KubeApiError(422, "Invalid", "MaintenanceTask is invalid", { details: { causes } });

  it("names each refused field with the flag that set it", () => {
    const err = refusalOf(
      status([
        { field: "spec.clusters.selector.matchLabels", message: 'key "-x" is not a valid label key' },
        { field: "spec.release.version", message: "must be major.minor.patch" },
      ]),
      'MaintenanceTask "t"',
      TASK_FLAGS,
    );
    expect(err?.message).toBe(
      'the API server refused MaintenanceTask "t": spec.clusters.selector.matchLabels: key "-x" is not a valid label key (--selector); spec.release.version: must be major.minor.patch (--release)',
    );
  });

  it("leaves other errors alone", () => {
    expect(refusalOf(new KubeApiError(409, "Conflict", "exists", {}), "x", TASK_FLAGS)).toBeUndefined();
    expect(refusalOf(new Error("boom"), "x", TASK_FLAGS)).toBeUndefined();
  });
});

describe("a run's current step", () => {
  const run = (status: MaintenanceRun["status"]): MaintenanceRun => ({
    metadata: { name: "r", namespace: "n" },
    spec: { task: "t", taskType: "UpgradeControlPlane", clusterRef: { name: "c" } },
    ...(status ? { status } : {}),
  });

  it("is the running one, else the next pending, else the last", () => {
    const steps = [
      { name: "a", state: "Succeeded" as const },
      { name: "b", state: "Running" as const, message: "waiting for HyperShift" },
      { name: "c", state: "Pending" as const },
    ];
    expect(currentStep(run({ phase: "Running", steps }))?.name).toBe("b");
    expect(runMessage(run({ phase: "Running", steps }))).toBe("waiting for HyperShift");
    expect(currentStep(run({ steps: [steps[0]!, steps[2]!] }))?.name).toBe("c");
    expect(currentStep(run({ steps: [steps[0]!] }))?.name).toBe("a");
    expect(currentStep(run(undefined))).toBeUndefined();
  });

  it("counts runs by phase in the phases' order", () => {
    expect(runsByPhase({ Succeeded: 2, Running: 1, Failed: 0 })).toBe("Running=1 Succeeded=2");
    expect(runsByPhase(undefined)).toBe("-");
  });
});
