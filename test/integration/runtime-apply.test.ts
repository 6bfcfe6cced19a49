/** Applier.applyIfChanged against a real apiserver, whose defaulting makes spec comparison useless. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { Applier, summariseManagedFields } from "../../operators/runtime/apply.ts";
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

  it("after a restart, recognises its own last apply and writes nothing; an edit elsewhere is put back", async () => {
    const before = new Applier(client, "apply-restart");
    const ref = { name: "w", namespace: ns.name };
    await client.delete(ManifestWorkResource, ref);
    await before.applyIfChanged(ManifestWorkResource, work("r"), undefined);
    const stored = await client.get<ManifestWork>(ManifestWorkResource, ref.name, ref.namespace);

    // Another controller adds a label (metadata only, as a finalizer would be): still this controller's object.
    await client.mergePatch(ManifestWorkResource, ref, {
      metadata: { labels: { "example.com/other": "x" } },
    });
    const labelled = await client.get<ManifestWork>(ManifestWorkResource, ref.name, ref.namespace);
    // A new Applier remembers nothing, as after a restart; it sees the object as the informers
    // cache it, with managedFields only summarised.
    const after = new Applier(client, "apply-restart");
    const cached = labelled && summariseManagedFields(labelled);
    expect(JSON.stringify(cached?.metadata.managedFields).length).toBeLessThan(
      JSON.stringify(labelled?.metadata.managedFields).length,
    );
    expect(await after.applyIfChanged(ManifestWorkResource, work("r"), cached)).toBeUndefined();
    expect(
      (await client.get<ManifestWork>(ManifestWorkResource, ref.name, ref.namespace))?.metadata
        .resourceVersion,
    ).toBe(labelled?.metadata.resourceVersion);
    // A changed desired object is applied.
    const changed = await new Applier(client, "apply-restart").applyIfChanged<ManifestWork>(
      ManifestWorkResource,
      work("s"),
      stored,
    );
    expect(dataOf(changed)).toEqual({ data: "s" });

    // Another manager edited it while the controller was down: the first apply after the restart puts it back.
    const edited = await client.mergePatch<ManifestWork>(ManifestWorkResource, ref, {
      spec: { workload: work("edited").spec?.workload },
    });
    const restored = await new Applier(client, "apply-restart").applyIfChanged<ManifestWork>(
      ManifestWorkResource,
      work("s"),
      summariseManagedFields(edited),
    );
    expect(dataOf(restored)).toEqual({ data: "s" });
  });
});

describe("Applier.applyStatus", () => {
  const condition = (message: string) => ({
    conditions: [
      {
        type: "Applied",
        status: "True",
        reason: "AppliedManifestWorkComplete",
        message,
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ],
  });

  it("does not send a status again while the cache still shows the object from before its own write", async () => {
    let applies = 0;
    const counting = new Proxy(client, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        const method = value as (...args: unknown[]) => unknown;
        return (...args: unknown[]) => {
          if (prop === "apply") applies++;
          return method.apply(target, args);
        };
      },
    });
    const applier = new Applier(counting, "status-test");
    const ref = { name: "status-w", namespace: ns.name };
    const stale = await client.apply<ManifestWork>(
      ManifestWorkResource,
      { ...work("s"), metadata: ref },
      { fieldManager: "status-test-setup" },
    );

    expect(await applier.applyStatus(ManifestWorkResource, stale, condition("one"))).toBeDefined();
    // The watch has not brought the write back: the same status is not sent again…
    expect(await applier.applyStatus(ManifestWorkResource, stale, condition("one"))).toBeUndefined();
    expect(applies).toBe(1);
    // …but a different one is.
    expect(await applier.applyStatus(ManifestWorkResource, stale, condition("two"))).toBeDefined();
    expect(applies).toBe(2);

    // The cache caught up: compared with what it shows.
    const fresh = await client.get<ManifestWork>(ManifestWorkResource, ref.name, ref.namespace);
    expect(await applier.applyStatus(ManifestWorkResource, fresh, condition("two"))).toBeUndefined();
    expect(applies).toBe(2);

    // Someone else changed the status since: it is put back.
    const edited = await client.apply<ManifestWork>(
      ManifestWorkResource,
      { metadata: ref, status: condition("edited") },
      { fieldManager: "someone-else", force: true, subresource: "status" },
    );
    const written = await applier.applyStatus<ManifestWork>(ManifestWorkResource, edited, condition("two"));
    expect(written?.status?.conditions?.[0]?.message).toBe("two");
    expect(applies).toBe(3);
  });
});
