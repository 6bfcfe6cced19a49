/**
 * The record of a work's first apply: its writes (one create, one status write, as OCM's agent)
 * and what a crash between them leaves a restarted agent.
 */
import { describe, expect, test } from "vitest";
import type { ApplyOptions, KubeObject, ResourceType } from "../runtime/kube.ts";
import { DEFAULT_ALLOWED_KINDS } from "./apply.ts";
import { AppliedManifestWorkResource, recordedResources, type AppliedManifestWork } from "./appliedwork.ts";
import {
  UID,
  HUB,
  configMapType,
  configMap,
  received,
  setup,
  type WorkSpec,
} from "../../test/support/maestro-agent.ts";
import { RecordingKube } from "../../test/support/recording-kube.ts";

const RECORD = `${HUB}-${UID}`;

/**
 * A management cluster on which the agent dies at its next status write of a record (armed), and
 * which notes what the record listed each time an object was applied.
 */
class CrashingKube extends RecordingKube {
  crashAtRecordStatus = false;
  readonly coveredAtApply = new Map<string, string[]>();

  override apply<T extends KubeObject>(t: ResourceType, obj: KubeObject, opts: ApplyOptions): Promise<T> {
    const isRecord = t.plural === AppliedManifestWorkResource.plural;
    if (isRecord && opts.subresource === "status" && this.crashAtRecordStatus)
      return Promise.reject(new Error("agent killed before the record's status write"));
    if (!isRecord) this.coveredAtApply.set(obj.metadata.name ?? "", this.covered());
    return super.apply<T>(t, obj, opts);
  }

  covered(): string[] {
    return recordedResources(this.peek<AppliedManifestWork>(AppliedManifestWorkResource, RECORD)).map(
      (r) => r.name,
    );
  }

  recordWrites(): string[] {
    return this.calls
      .filter(
        (c) =>
          c.resource.startsWith(AppliedManifestWorkResource.plural) &&
          ["apply", "create", "delete"].includes(c.verb),
      )
      .map((c) => `${c.verb} ${c.subresource ?? "spec"}`);
  }
}

const twoMaps: WorkSpec = { manifests: [configMap("cm-1"), configMap("cm-2")] };

/** The first apply of twoMaps, killed after every object is applied, before the record's status. */
async function crashedFirstApply(): Promise<CrashingKube> {
  const kube = new CrashingKube();
  kube.crashAtRecordStatus = true;
  const t = setup(twoMaps, DEFAULT_ALLOWED_KINDS, [], { kube });
  await expect(t.reconcile()).rejects.toThrow(/agent killed/);
  expect(kube.peek(configMapType, "cm-1", "ns")).toBeDefined();
  expect(kube.peek(configMapType, "cm-2", "ns")).toBeDefined();
  kube.crashAtRecordStatus = false;
  return kube;
}

/** A restarted agent (an empty store, nothing remembered) on the same cluster, given `spec`. */
function restarted(kube: CrashingKube, spec: WorkSpec) {
  return setup(spec, DEFAULT_ALLOWED_KINDS, [], { kube });
}

async function reconcileUntilDone(t: ReturnType<typeof setup>): Promise<void> {
  for (let i = 0; i < 5; i++) if ((await t.reconcile()).requeueAfterMs === undefined) return;
  throw new Error("the deletion did not finish");
}

describe("AgentWorkReconciler: the record of a work's first apply", () => {
  test("one create carrying the intent, then one status write with the uids", async () => {
    const kube = new CrashingKube();
    const t = setup(twoMaps, DEFAULT_ALLOWED_KINDS, [], { kube });
    await t.reconcile();
    expect(kube.recordWrites()).toEqual(["apply spec", "apply status"]);
    // Each object was covered by the record before it was created.
    expect(Object.fromEntries(kube.coveredAtApply)).toEqual({
      "cm-1": ["cm-1", "cm-2"],
      "cm-2": ["cm-1", "cm-2"],
    });
    const uids = ["cm-1", "cm-2"].map((n) => kube.peek(configMapType, n, "ns")?.metadata.uid);
    expect(t.record()?.status?.appliedResources?.map((r) => r.uid)).toEqual(uids);
  });

  test("killed before the status write, then sent again: applied and recorded with the uids, no second create", async () => {
    const kube = await crashedFirstApply();
    expect(kube.covered()).toEqual(["cm-1", "cm-2"]);
    const t = restarted(kube, twoMaps);
    const writesBefore = kube.recordWrites().length;
    await t.reconcile();
    expect(kube.recordWrites().slice(writesBefore)).toEqual(["apply status"]);
    expect(t.record()?.status?.appliedResources?.every((r) => r.uid)).toBe(true);
    expect(t.recorded()).toEqual(["cm-1", "cm-2"]);
  });

  test("killed before the status write, then the work deleted: every object deleted, the record removed", async () => {
    const kube = await crashedFirstApply();
    const t = restarted(kube, twoMaps);
    t.store.upsert(received(twoMaps, "2030-01-01T00:00:00Z"));
    await reconcileUntilDone(t);
    expect(kube.peek(configMapType, "cm-1", "ns")).toBeUndefined();
    expect(kube.peek(configMapType, "cm-2", "ns")).toBeUndefined();
    expect(t.record()).toBeUndefined();
  });

  test("killed before the status write, then a generation dropping cm-2: cm-2 deleted", async () => {
    const kube = await crashedFirstApply();
    const t = restarted(kube, { generation: 2, manifests: [configMap("cm-1")] });
    await t.reconcile();
    expect(kube.peek(configMapType, "cm-2", "ns")).toBeUndefined();
    expect(kube.peek(configMapType, "cm-1", "ns")).toBeDefined();
  });

  test("killed again after a spec write (a new deleteOption) that precedes the status: the intent is kept", async () => {
    const kube = await crashedFirstApply();
    const spec: WorkSpec = {
      generation: 2,
      manifests: [...twoMaps.manifests!, configMap("cm-3")],
      deleteOption: { propagationPolicy: "Orphan" },
    };
    const t = restarted(kube, spec);
    kube.crashAtRecordStatus = true;
    await expect(t.reconcile()).rejects.toThrow(/agent killed/);
    expect(t.record()?.metadata.annotations?.["hcp.aro.dev/delete-option"]).toContain("Orphan");
    // cm-3 was not applied: the status that would have listed it first was never written.
    expect(kube.peek(configMapType, "cm-3", "ns")).toBeUndefined();
    expect(kube.covered()).toEqual(["cm-1", "cm-2"]);
  });
});
