/** Applier.applyIfChanged against a real apiserver, whose defaulting makes spec comparison useless. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { Applier } from "../../operators/runtime/apply.ts";
import { clientFor, tempNamespace } from "../support/fixtures.ts";

const client = clientFor("service");
let ns: { name: string; remove(): Promise<void> };

function work(data: string): ManifestWork {
  return {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: { name: "w", namespace: ns.name },
    spec: {
      workload: {
        manifests: [
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "x" }, data: { data } },
        ],
      },
      // The CRD defaults feedbackScrapeType: the stored spec never equals this one.
      manifestConfigs: [
        {
          resourceIdentifier: { resource: "configmaps", name: "c", namespace: "x" },
          feedbackRules: [{ type: "WellKnownStatus" }],
        },
      ],
    },
  };
}

const scrapeTypeOf = (w: ManifestWork | undefined) => w?.spec?.manifestConfigs?.[0]?.feedbackScrapeType;
const generationOf = (w: ManifestWork | undefined) => w?.metadata.generation ?? 0;
const dataOf = (w: ManifestWork | undefined) => w?.spec?.workload?.manifests?.[0]?.["data"];

beforeAll(async () => {
  ns = await tempNamespace(client, "apply");
});
afterAll(async () => {
  await ns.remove();
});

describe("Applier.applyIfChanged", () => {
  it("applies once, skips a repeat, and applies again after a change here or an edit elsewhere", async () => {
    const applier = new Applier(client, "apply-test");
    const first = await applier.applyIfChanged<ManifestWork>(ManifestWorkResource, work("a"), undefined);
    expect(scrapeTypeOf(first)).toBe("Poll");
    expect(await applier.applyIfChanged(ManifestWorkResource, work("a"), first)).toBeUndefined();

    const changed = await applier.applyIfChanged<ManifestWork>(ManifestWorkResource, work("b"), first);
    expect(changed?.metadata.generation).toBe(generationOf(first) + 1);

    // Someone else edits a field the controller owns: the generation moves and its version is put back.
    const edited = await client.mergePatch<ManifestWork>(
      ManifestWorkResource,
      { name: "w", namespace: ns.name },
      {
        spec: { workload: work("edited").spec?.workload },
      },
    );
    expect(await applier.applyIfChanged(ManifestWorkResource, work("b"), changed)).toBeUndefined();
    const restored = await applier.applyIfChanged<ManifestWork>(ManifestWorkResource, work("b"), edited);
    expect(dataOf(restored)).toEqual({ data: "b" });
    expect(restored?.metadata.generation).toBeGreaterThan(generationOf(edited));
  });
});
