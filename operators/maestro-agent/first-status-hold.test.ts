/**
 * A generation's first status waits a moment for the feedback it asks back, so the source is told
 * once with HyperShift's answer rather than once before it and once with it; anything else is
 * told at once.
 */
import { describe, expect, test } from "vitest";
import type { Manifest, ManifestConfigOption } from "../api/work/v1.ts";
import type { KubeObject } from "../runtime/kube.ts";
import {
  condition,
  configMap,
  configMapType,
  manifestCondition,
  setup,
  STATUS_SYNC_MS,
} from "../../test/support/maestro-agent.ts";

const HOLD_MS = 10_000;

/** A ConfigMap whose `data.answer` is asked back: absent until "someone" writes it. */
const asking = (name: string): ManifestConfigOption => ({
  resourceIdentifier: { group: "", resource: "configmaps", name, namespace: "ns" },
  feedbackRules: [{ type: "JSONPaths", jsonPaths: [{ name: "answer", path: ".data.answer" }] }],
});

function work(manifest: Manifest = configMap("cm"), config: ManifestConfigOption = asking("cm")) {
  return setup({ manifests: [manifest], manifestConfigs: [config] }, undefined, [], {
    firstStatusHoldMs: HOLD_MS,
  });
}

/** The object's owner answers: the value the feedback rule reads appears. */
function answer(t: ReturnType<typeof work>, value: string): void {
  const cm = t.kube.peek<KubeObject & { data?: Record<string, string> }>(configMapType, "cm", "ns");
  t.kube.seed(configMapType, { ...cm!, data: { ...cm!.data, answer: value } });
}

describe("a generation's first status", () => {
  test("is held while its feedback is to come, and told once when the feedback arrives", async () => {
    const t = work();
    expect(await t.reconcile()).toEqual({ requeueAfterMs: HOLD_MS });
    expect(t.publisher.published).toEqual([]);
    t.clock.ms += 3_000;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: HOLD_MS - 3_000 });
    expect(t.publisher.published).toEqual([]);

    answer(t, "42");
    t.clock.ms += 1_000;
    await t.reconcile();
    expect(t.publisher.published).toHaveLength(1);
    expect(manifestCondition(t.publisher.last, 0, "StatusFeedbackSynced")?.status).toBe("True");
    expect(t.publisher.last?.resourceStatus?.manifests?.[0]?.statusFeedback?.values).toEqual([
      { name: "answer", fieldValue: { type: "String", string: "42" } },
    ]);
  });

  test("is told as it is once the hold ends without an answer", async () => {
    const t = work();
    await t.reconcile();
    t.clock.ms += HOLD_MS;
    expect(await t.reconcile()).toEqual({ requeueAfterMs: STATUS_SYNC_MS });
    expect(t.publisher.published).toHaveLength(1);
    expect(condition(t.publisher.last, "Applied")?.status).toBe("True");
    expect(manifestCondition(t.publisher.last, 0, "StatusFeedbackSynced")?.reason).toBe(
      "NoStatusFeedbackSynced",
    );
  });

  test("is told at once when nothing is to come: every value asked is there, or none is asked", async () => {
    const answered = work(configMap("cm", { answer: "already" }));
    await answered.reconcile();
    expect(answered.publisher.published).toHaveLength(1);

    const unasked = setup({ manifests: [configMap("cm")] }, undefined, [], {
      firstStatusHoldMs: HOLD_MS,
    });
    await unasked.reconcile();
    expect(unasked.publisher.published).toHaveLength(1);
  });

  test("is told at once when the apply failed", async () => {
    const t = setup(
      { manifests: [configMap("cm")], manifestConfigs: [asking("cm")] },
      ["apps/Deployment"],
      [],
      { firstStatusHoldMs: HOLD_MS },
    );
    await t.reconcile();
    expect(t.publisher.published).toHaveLength(1);
    expect(condition(t.publisher.last, "Applied")?.status).toBe("False");
  });

  test("a later status of the same generation is not held", async () => {
    const t = work();
    await t.reconcile();
    answer(t, "1");
    await t.reconcile();
    answer(t, "2");
    await t.reconcile();
    expect(
      t.publisher.published.map((s) => s.resourceStatus?.manifests?.[0]?.statusFeedback?.values),
    ).toEqual([
      [{ name: "answer", fieldValue: { type: "String", string: "1" } }],
      [{ name: "answer", fieldValue: { type: "String", string: "2" } }],
    ]);
  });
});
