import { describe, expect, test } from "vitest";
import type { Manifest } from "../api/work/v1.ts";
import { KubeApiError, type KubeObject } from "../runtime/kube.ts";
import {
  UID,
  STATUS_SYNC_MS,
  REAPPLY_MS,
  T0,
  types,
  configMapType,
  configMap,
  strategyFor,
  received,
  setup,
  condition,
  manifestCondition,
} from "../../test/support/maestro-agent.ts";

describe("AgentWorkReconciler: apply by update strategy", () => {
  test.each([
    {
      name: "Update (no manifestConfig): a forced apply as work-agent",
      configs: undefined,
      existing: false,
      calls: ["apply ns/cm-1"],
      apply: { fieldManager: "work-agent", force: true },
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "ServerSideApply with its own field manager and no force",
      configs: [
        strategyFor("cm-1", {
          type: "ServerSideApply",
          serverSideApply: { fieldManager: "work-agent-x", force: false },
        }),
      ],
      existing: false,
      calls: ["apply ns/cm-1"],
      apply: { fieldManager: "work-agent-x", force: false },
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "ServerSideApply with defaults: work-agent, not forced",
      configs: [strategyFor("cm-1", { type: "ServerSideApply" })],
      existing: false,
      calls: ["apply ns/cm-1"],
      apply: { fieldManager: "work-agent", force: false },
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "CreateOnly on a missing object: created",
      configs: [strategyFor("cm-1", { type: "CreateOnly" })],
      existing: false,
      calls: ["find ns/cm-1", "create ns/cm-1"],
      apply: undefined,
      data: { key: "value" },
      recorded: ["cm-1"],
    },
    {
      name: "CreateOnly on an existing object: left as it is",
      configs: [strategyFor("cm-1", { type: "CreateOnly" })],
      existing: true,
      calls: ["find ns/cm-1"],
      apply: undefined,
      data: { key: "theirs" },
      recorded: ["cm-1"],
    },
    {
      name: "ReadOnly on an existing object: only read, and not recorded (never deleted)",
      configs: [strategyFor("cm-1", { type: "ReadOnly" })],
      existing: true,
      calls: ["find ns/cm-1"],
      apply: undefined,
      data: { key: "theirs" },
      recorded: [],
    },
  ])("$name", async ({ configs, existing, calls, apply, data, recorded }) => {
    const t = setup(configs ? { manifestConfigs: configs } : {});
    if (existing) t.kube.seed(configMapType, configMap("cm-1", { key: "theirs" }) as KubeObject);
    // Nothing of the work needs polling: it is looked at again at the drift check.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    expect(t.kube.callsOn("configmaps")).toEqual(calls);
    if (apply) expect(t.kube.calls.find((c) => c.resource === "configmaps")).toMatchObject(apply);
    expect(t.kube.peek(configMapType, "cm-1", "ns")?.["data"]).toEqual(data);
    expect(t.recorded()).toEqual(recorded);
    expect(condition(t.publisher.last, "Applied")).toMatchObject({ status: "True" });
    expect(condition(t.publisher.last, "Available")).toMatchObject({ status: "True" });
    expect(t.store.get(UID)).toMatchObject({ appliedGeneration: 1, appliedAtMs: T0 });
  });

  test("ReadOnly on a missing object: Available=False, nothing written", async () => {
    const t = setup({ manifestConfigs: [strategyFor("cm-1", { type: "ReadOnly" })] });
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["find ns/cm-1"]);
    expect(manifestCondition(t.publisher.last, 0, "Available")).toMatchObject({
      status: "False",
      reason: "ResourceNotAvailable",
    });
  });

  test("a conflict with another field manager fails the manifest with a hint, and is retried later", async () => {
    const t = setup({ manifestConfigs: [strategyFor("cm-1", { type: "ServerSideApply" })] });
    t.kube.failNext("apply", "cm-1", new KubeApiError(409, "Conflict", "Apply failed with 1 conflict", {}));
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(manifestCondition(t.publisher.last, 0, "Applied")?.message).toMatch(/set serverSideApply.force/);
    expect(condition(t.publisher.last, "Degraded")).toMatchObject({ status: "True", reason: "ApplyFailed" });
    // Not recorded as applied: the next reconcile applies again.
    expect(t.store.get(UID)?.appliedGeneration).toBeUndefined();
  });
});

describe("AgentWorkReconciler: the allow-list", () => {
  test.each([
    { name: "a Secret outside [ConfigMap]", manifest: "v1/Secret", allowed: ["ConfigMap"], refused: true },
    {
      name: "a Deployment under *.apps",
      manifest: "apps/v1/Deployment",
      allowed: ["*.apps"],
      refused: false,
    },
    {
      name: "a Deployment outside [Deployment] (group missing)",
      manifest: "apps/v1/Deployment",
      allowed: ["Deployment"],
      refused: true,
    },
    { name: "a Namespace under *", manifest: "v1/Namespace", allowed: ["*"], refused: false },
  ])("$name: refused=$refused", async ({ manifest, allowed, refused }) => {
    const type = types[manifest]!;
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    const m: Manifest = {
      apiVersion,
      kind: type.kind,
      metadata: { name: "x", ...(type.namespaced ? { namespace: "ns" } : {}) },
    };
    const t = setup({ manifests: [m] }, allowed);
    await t.reconcile();
    const resource = type.group ? `${type.plural}.${type.group}` : type.plural;
    expect(t.kube.callsOn(resource)).toEqual(refused ? [] : [`apply ${type.namespaced ? "ns" : ""}/x`]);
    const applied = manifestCondition(t.publisher.last, 0, "Applied");
    if (refused) {
      expect(applied).toMatchObject({ status: "False", reason: "ManifestKindNotAllowed" });
      expect(applied?.message).toMatch(/not in this agent's allow-list/);
      expect(condition(t.publisher.last, "Degraded")).toMatchObject({
        status: "True",
        reason: "ManifestKindNotAllowed",
      });
    } else {
      expect(applied).toMatchObject({ status: "True" });
    }
  });

  test("a kind the cluster does not serve fails that manifest only", async () => {
    const t = setup(
      { manifests: [configMap("cm-1"), { apiVersion: "v1", kind: "Widget", metadata: { name: "w" } }] },
      ["*"],
    );
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1"]);
    expect(manifestCondition(t.publisher.last, 1, "Applied")).toMatchObject({
      status: "False",
      reason: "AppliedManifestFailed",
    });
    expect(manifestCondition(t.publisher.last, 1, "Available")).toMatchObject({
      status: "Unknown",
      reason: "IncompleteResourceMeta",
    });
  });
});

describe("AgentWorkReconciler: manifests a new generation no longer holds", () => {
  test.each([
    { name: "default deleteOption: deleted", deleteOption: undefined, deleted: true },
    {
      name: "Foreground: deleted",
      deleteOption: { propagationPolicy: "Foreground" as const },
      deleted: true,
    },
    { name: "Orphan: kept", deleteOption: { propagationPolicy: "Orphan" as const }, deleted: false },
    {
      name: "SelectivelyOrphan naming it: kept",
      deleteOption: {
        propagationPolicy: "SelectivelyOrphan" as const,
        selectivelyOrphans: { orphaningRules: [{ resource: "configmaps", name: "cm-2", namespace: "ns" }] },
      },
      deleted: false,
    },
    {
      name: "SelectivelyOrphan naming another: deleted",
      deleteOption: {
        propagationPolicy: "SelectivelyOrphan" as const,
        selectivelyOrphans: { orphaningRules: [{ resource: "configmaps", name: "cm-1", namespace: "ns" }] },
      },
      deleted: true,
    },
  ])("$name", async ({ deleteOption, deleted }) => {
    const spec = {
      manifests: [configMap("cm-1"), configMap("cm-2")],
      ...(deleteOption ? { deleteOption } : {}),
    };
    const t = setup(spec);
    await t.reconcile();
    expect(t.recorded()).toEqual(["cm-1", "cm-2"]);
    t.store.upsert(received({ ...spec, generation: 2, manifests: [configMap("cm-1")] }));
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").includes("delete ns/cm-2")).toBe(deleted);
    expect(t.kube.peek(configMapType, "cm-2", "ns") === undefined).toBe(deleted);
    if (deleted)
      expect(t.kube.calls.find((c) => c.verb === "delete")).toMatchObject({
        propagationPolicy: "Background",
      });
    // An object still being deleted stays on the record until it is gone; an orphan leaves it.
    expect(t.recorded()).toEqual(deleted ? ["cm-1", "cm-2"] : ["cm-1"]);
    expect(t.store.get(UID)?.appliedGeneration).toBe(2);
  });

  test("an object someone re-created under the same name (another uid) is not deleted", async () => {
    const spec = { manifests: [configMap("cm-1"), configMap("cm-2")] };
    const t = setup(spec);
    await t.reconcile();
    t.kube.seed(configMapType, {
      ...(configMap("cm-2") as KubeObject),
      metadata: { name: "cm-2", namespace: "ns", uid: "theirs" },
    });
    t.store.upsert(received({ generation: 2, manifests: [configMap("cm-1")] }));
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).not.toContain("delete ns/cm-2");
  });
});
