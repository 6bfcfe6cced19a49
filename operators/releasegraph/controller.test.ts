import { describe, expect, it } from "vitest";
import { FakeLister } from "../../test/support/lister.ts";
import { testContext } from "../../test/support/fakes.ts";
import { ReleaseCatalog } from "../releases/catalog.ts";
import { GRAPH_PARAMS_CONFIGMAP } from "../releases/graph-params.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { ReleaseGraphReconciler } from "./controller.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const DAY = 24 * 3600 * 1000;
const eol = new Date(NOW + 3 * DAY).toISOString();

function world(catalogText: string) {
  let now = NOW;
  const configMaps = new FakeLister<KubeObject>([]);
  const applied: KubeObject[] = [];
  const reconciler = new ReleaseGraphReconciler({
    catalog: { current: () => ReleaseCatalog.parse(catalogText) },
    configMaps,
    namespace: "ops",
    applier: {
      apply: async <T extends KubeObject>(_type: unknown, obj: KubeObject): Promise<T> => {
        applied.push(obj);
        configMaps.set(obj);
        return Promise.resolve(obj as T);
      },
    },
    now: () => now,
  });
  return {
    applied,
    configMaps,
    reconcile: () => reconciler.reconcile(testContext(), { cluster: "service", namespace: "ops", name: "x" }),
    tick: (ms: number) => (now += ms),
  };
}

describe("the release-graph reconciler", () => {
  it("writes the refusals once, again when an end of life passes, and puts back an edit", async () => {
    const w = world(
      `releases:\n  - {version: 4.19.7, image: a, endOfLifeTimestamp: "${eol}"}\n  - {version: 4.20.2, image: b}\n`,
    );
    // Looks again by the time 4.19's end of life passes (at most a day on): no object changes then.
    expect(await w.reconcile()).toEqual({ requeueAfterMs: DAY });
    expect(w.applied).toHaveLength(1);
    expect(w.applied[0]?.metadata).toMatchObject({ name: GRAPH_PARAMS_CONFIGMAP, namespace: "ops" });
    expect(w.applied[0]?.["data"]).toEqual({});
    await w.reconcile();
    expect(w.applied).toHaveLength(1);
    w.tick(3 * DAY);
    expect(await w.reconcile()).toEqual({});
    expect(Object.keys(w.applied[1]?.["data"] as object)).toEqual([
      "stable.new.to.4.19.7",
      "stable.new.to.4.19",
    ]);
    w.configMaps.set({ ...w.applied[1]!, data: {} });
    await w.reconcile();
    expect(w.applied).toHaveLength(3);
  });
});
