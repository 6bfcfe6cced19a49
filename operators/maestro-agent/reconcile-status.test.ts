/** The agent's status: what it syncs back on a period, and reapplying what drifted. */
import { describe, expect, test } from "vitest";
import { PublishRefusedError } from "../cloudevents/client/errors.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { DEFAULT_ALLOWED_KINDS } from "./apply.ts";
import {
  UID,
  STATUS_SYNC_MS,
  REAPPLY_MS,
  configMapType,
  configMap,
  received,
  setup,
} from "../../test/support/maestro-agent.ts";

describe("AgentWorkReconciler: status sync and reapply", () => {
  test.each([
    // The drift check is due 1 ms later, but a requeue is never sooner than the status sync period.
    {
      name: "before reapplyMs: only read",
      advanceMs: REAPPLY_MS,
      changed: true,
      applies: 1,
      next: STATUS_SYNC_MS,
    },
    {
      name: "after reapplyMs, an object someone changed: applied again (drift repair)",
      advanceMs: REAPPLY_MS + 1,
      changed: true,
      applies: 2,
      next: REAPPLY_MS + 1,
    },
    {
      name: "after reapplyMs, an object someone wrote without changing what the manifest sets: only read",
      advanceMs: REAPPLY_MS + 1,
      changed: true,
      edit: { metadata: { labels: { "added-by": "someone-else" } } },
      applies: 1,
      next: REAPPLY_MS + 1,
    },
    {
      name: "after reapplyMs, an object nobody changed: only read",
      advanceMs: REAPPLY_MS + 1,
      changed: false,
      applies: 1,
      next: REAPPLY_MS + 1,
    },
  ])("$name", async ({ advanceMs, changed, edit, applies, next }) => {
    const t = setup();
    const recordWrites = () =>
      t.kube.calls.filter((c) => c.resource.startsWith("appliedmanifestworks") && c.verb === "apply").length;
    await t.reconcile();
    const firstRecordWrites = recordWrites();
    if (changed) {
      const live = t.kube.peek(configMapType, "cm-1", "ns")!;
      const metadata = { ...live.metadata, ...edit?.metadata };
      t.kube.seed(configMapType, edit ? { ...live, metadata } : { ...live, data: { key: "edited" } });
    }
    t.clock.ms += advanceMs;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: next });
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(applies);
    // The record of an unchanged work is already what the drift-repair apply would write.
    expect(recordWrites()).toBe(firstRecordWrites);
  });

  test("the record is created with the first apply's intent, then its status written once; a generation adding objects writes its intent to the status first", async () => {
    const t = setup({ manifests: [configMap("cm-1")] });
    const recordWrites = () =>
      t.kube.calls
        .filter((c) => c.resource.startsWith("appliedmanifestworks") && c.verb === "apply")
        .map((c) => c.subresource ?? "spec");
    await t.reconcile();
    // As OCM's agent: one create and one status write per work at create.
    expect(recordWrites()).toEqual(["spec", "status"]);
    t.store.upsert(received({ generation: 2, manifests: [configMap("cm-1"), configMap("cm-2")] }));
    await t.reconcile();
    expect(recordWrites()).toEqual(["spec", "status", "status", "status"]);
    expect(t.recorded()).toEqual(["cm-1", "cm-2"]);
  });

  test("an object whose status alone moved (same generation) is not taken for drift", async () => {
    const t = setup();
    t.kube.seed(configMapType, {
      ...configMap("cm-1", { key: "value" }),
      metadata: { name: "cm-1", namespace: "ns", generation: 1 },
    });
    await t.reconcile();
    const current = t.kube.peek(configMapType, "cm-1", "ns")!;
    t.kube.seed(configMapType, { ...current, status: { reported: "by its controller" } });
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(1);
    t.kube.seed(configMapType, {
      ...current,
      data: { key: "edited" },
      metadata: { ...current.metadata, generation: 2 },
    });
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(2);
  });

  test("an object left alone at one drift check is still repaired at the next once changed", async () => {
    const t = setup();
    await t.reconcile();
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    t.kube.seed(configMapType, { ...t.kube.peek(configMapType, "cm-1", "ns")!, data: { key: "edited" } });
    t.clock.ms += REAPPLY_MS + 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps").filter((c) => c.startsWith("apply"))).toHaveLength(2);
    expect(
      t.kube.peek<KubeObject & { data?: Record<string, string> }>(configMapType, "cm-1", "ns")?.data,
    ).toEqual({
      key: "value",
    });
  });

  test("an object that only has to exist, deleted behind the agent's back, is applied again at the drift check", async () => {
    const t = setup();
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    await t.kube.delete(configMapType, { name: "cm-1", namespace: "ns" });
    // A sync in between (a watched object's event) goes by what the last read found.
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "delete ns/cm-1"]);
    t.clock.ms += REAPPLY_MS - STATUS_SYNC_MS + 1;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    expect(t.kube.callsOn("configmaps")).toEqual([
      "apply ns/cm-1",
      "delete ns/cm-1",
      "find ns/cm-1",
      "apply ns/cm-1",
    ]);
    expect(t.kube.peek(configMapType, "cm-1", "ns")).toBeDefined();
  });

  test("existence stands for the reapply period, and the drift check reads it afresh", async () => {
    const t = setup();
    await t.reconcile();
    t.clock.ms += REAPPLY_MS - 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1"]);
    t.clock.ms += 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1"]);
    // Read 1 ms ago, but the drift check compares what is there now.
    t.clock.ms += 1;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1", "find ns/cm-1"]);
    t.clock.ms += STATUS_SYNC_MS;
    await t.reconcile();
    expect(t.kube.callsOn("configmaps")).toHaveLength(3);
  });

  test("an object whose status is asked back and that no watch covers is read at every status sync", async () => {
    const rules = [
      {
        resourceIdentifier: { resource: "configmaps", name: "cm-1", namespace: "ns" },
        feedbackRules: [{ type: "JSONPaths" as const, jsonPaths: [{ name: "v", path: ".data.key" }] }],
      },
    ];
    const t = setup({ manifestConfigs: rules });
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    t.kube.seed(configMapType, { ...t.kube.peek(configMapType, "cm-1", "ns")!, data: { key: "edited" } });
    t.clock.ms += STATUS_SYNC_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1"]);
    const feedback = t.publisher.last?.resourceStatus?.manifests?.[0]?.statusFeedback?.values;
    expect(feedback).toEqual([{ name: "v", fieldValue: { type: "String", string: "edited" } }]);
  });

  test("a watched kind: read from the watch once synced, changes enqueue the work, no polling", async () => {
    const rules = [
      {
        resourceIdentifier: { resource: "configmaps", name: "cm-1", namespace: "ns" },
        feedbackRules: [
          { type: "JSONPaths" as const, jsonPaths: [{ name: "v", path: ".metadata.annotations.v" }] },
        ],
      },
    ];
    const t = setup({ manifestConfigs: rules }, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    // Until the watch has synced the work is polled like any other.
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    const watch = t.watches.get("configmaps")!;
    watch.synced = true;
    const fromWatch = configMap("cm-1") as KubeObject;
    fromWatch.metadata.annotations = { v: "from-watch" };
    watch.update(fromWatch);
    expect(t.changed).toEqual([UID]);
    // Synced: the status comes from the watch's cache and the next look is the drift-repair apply.
    t.clock.ms += 1000;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS - 1000 + 1 });
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1"]);
    const feedback = t.publisher.last?.resourceStatus?.manifests?.[0]?.statusFeedback?.values;
    expect(feedback).toEqual([{ name: "v", fieldValue: { type: "String", string: "from-watch" } }]);
  });

  test("a watched kind whose feedback reads past metadata and status: the watch keeps neither, so the apiserver is read at each sync", async () => {
    const rules = [
      {
        resourceIdentifier: { resource: "configmaps", name: "cm-1", namespace: "ns" },
        feedbackRules: [{ type: "JSONPaths" as const, jsonPaths: [{ name: "v", path: ".data.key" }] }],
      },
    ];
    const t = setup({ manifestConfigs: rules }, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    await t.reconcile();
    const watch = t.watches.get("configmaps")!;
    watch.synced = true;
    t.kube.seed(configMapType, { ...t.kube.peek(configMapType, "cm-1", "ns")!, data: { key: "live" } });
    t.clock.ms += STATUS_SYNC_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(t.kube.callsOn("configmaps")).toEqual(["apply ns/cm-1", "find ns/cm-1"]);
    const feedback = t.publisher.last?.resourceStatus?.manifests?.[0]?.statusFeedback?.values;
    expect(feedback).toEqual([{ name: "v", fieldValue: { type: "String", string: "live" } }]);
  });

  test("a change the apply sets off at once still finds the work (it is tracked before the apply)", async () => {
    const t = setup({}, DEFAULT_ALLOWED_KINDS, ["configmaps"]);
    // Another work's object started the watch of the kind, and it has synced.
    const other = { meta: { ordinal: 0, name: "other", namespace: "ns" }, strategy: "Update" as const };
    t.objects.track("uid-other", [{ ...other, type: configMapType }], true);
    const watch = t.watches.get("configmaps")!;
    watch.synced = true;
    // The controller owning the object reports before the agent's apply call has even returned.
    const apply = t.kube.apply.bind(t.kube);
    t.kube.apply = async (type, obj, opts) => {
      const written = await apply(type, obj, opts);
      watch.update({ ...written, data: { key: "reported" } });
      return written as never;
    };
    await t.reconcile();
    expect(t.changed).toEqual([UID]);
  });

  test("an unchanged status is published once", async () => {
    const t = setup();
    await t.reconcile();
    await t.reconcile();
    expect(t.publisher.published).toHaveLength(1);
  });

  test("without a broker the status is kept for the next resync and published once it is back", async () => {
    const t = setup();
    t.publisher.refusal = new PublishRefusedError("not-connected", "not connected");
    expect(await t.reconcile()).toEqual({ requeueAfterMs: REAPPLY_MS + 1 });
    expect(t.store.get(UID)).toMatchObject({ statusHash: undefined });
    expect(t.store.get(UID)?.status).toBeDefined();
    t.publisher.refusal = undefined;
    await t.reconcile();
    expect(t.publisher.published).toHaveLength(1);
    expect(t.store.get(UID)?.statusHash).toBeDefined();
  });

  test("any other publish error is thrown", async () => {
    const t = setup();
    t.publisher.refusal = new Error("boom");
    await expect(t.reconcile()).rejects.toThrow("boom");
  });
});
