/**
 * The template hold: the decision as a pure function, then the reconciler on fakes
 * (test/support/cluster-world.ts) holding a work only the template moved, and writing it when the
 * cluster changed or a RefreshWorkTemplate run allowed it.
 */
import { describe, expect, it } from "vitest";
import {
  WORK_TEMPLATE_ALLOWED_ANNOTATION,
  WORK_TEMPLATE_ANNOTATIONS,
  type HcpCluster,
  type HcpClusterStatus,
} from "../api/v1alpha1/index.ts";
import { summariseWorkSpec, type ManifestWork } from "../api/work/v1.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { cluster, condition, world } from "../../test/support/cluster-world.ts";
import { templateHold, workTemplateCondition } from "./work-template.ts";

function storedWork(annotations: Record<string, string> | undefined): KubeObject {
  return { metadata: { name: "uid-demo", namespace: "mgmt-1", ...(annotations && { annotations }) } };
}

const stamped = (revision: number, digest: string) =>
  storedWork({
    [WORK_TEMPLATE_ANNOTATIONS.revision]: String(revision),
    [WORK_TEMPLATE_ANNOTATIONS.inputs]: digest,
  });

function reconciled(c: HcpCluster, observedGeneration: number, appliedKeyId = "kid-1"): HcpCluster {
  return { ...c, status: { ...c.status, observedGeneration, serviceAccountSigningKey: { appliedKeyId } } };
}

describe("templateHold", () => {
  const c = cluster();
  it.each([
    ["no work yet", undefined, c, { write: true, why: "NoWork" }],
    ["a work at the current revision", stamped(2, "d"), c, { write: true, why: "Current" }],
    [
      "a work from a newer revision (operators rolled back)",
      stamped(3, "d"),
      c,
      { write: true, why: "Current" },
    ],
    ["only the template moved", stamped(1, "d"), c, { write: false, workRevision: 1 }],
    [
      "the cluster changed (another inputs digest)",
      stamped(1, "other"),
      c,
      { write: true, why: "ClusterChanged" },
    ],
    [
      "a refresh allowed the current revision",
      stamped(1, "d"),
      { ...c, metadata: { ...c.metadata, annotations: { [WORK_TEMPLATE_ALLOWED_ANNOTATION]: "2" } } },
      { write: true, why: "Allowed" },
    ],
    [
      "a refresh allowed an older revision only",
      stamped(1, "d"),
      { ...c, metadata: { ...c.metadata, annotations: { [WORK_TEMPLATE_ALLOWED_ANNOTATION]: "1" } } },
      { write: false, workRevision: 1 },
    ],
    [
      "a work from before revisions, its cluster's generation reconciled",
      storedWork(undefined),
      reconciled(c, 1),
      { write: false, workRevision: 0 },
    ],
    [
      "a work from before revisions, its signing key switched since",
      storedWork(undefined),
      reconciled(c, 1, "kid-0"),
      { write: true, why: "ClusterChanged" },
    ],
    [
      "a work from before revisions, its cluster changed since",
      storedWork(undefined),
      reconciled({ ...c, metadata: { ...c.metadata, generation: 2 } }, 1),
      { write: true, why: "ClusterChanged" },
    ],
  ])("%s", (_name, stored, cl, expected) => {
    expect(templateHold({ stored, cluster: cl, digest: "d", revision: 2, signingKeyId: "kid-1" })).toEqual(
      expected,
    );
  });

  it("words the condition truly both ways", () => {
    expect(workTemplateCondition({ workRevision: 2, currentRevision: 2 })).toMatchObject({
      status: "True",
      reason: "Current",
    });
    const held = workTemplateCondition({ workRevision: 1, currentRevision: 2 });
    expect(held).toMatchObject({ status: "False", reason: "OlderTemplate" });
    expect(held.message).toContain("revision 1");
    expect(held.message).toContain("RefreshWorkTemplate");
  });
});

describe("the cluster reconciler's template hold", () => {
  /** A world whose template revision the test moves, as an operators upgrade would. */
  async function readyWorld() {
    let revision = 1;
    const w = world({ workTemplateRevision: () => revision });
    await w.reconcile();
    const works = () => w.writer.of("apply", "ManifestWork").map((x) => x.body as ManifestWork);
    /** The next reconcile sees the last work written and the last status, as the informers would. */
    const observe = () => {
      const last = works().at(-1)!;
      w.works.set(summariseWorkSpec({ ...last, metadata: { ...last.metadata, generation: works().length } }));
      w.observeStatus();
    };
    observe();
    return { w, works, observe, upgrade: (to: number) => (revision = to) };
  }
  const revisionOf = (work: ManifestWork | undefined) =>
    work?.metadata.annotations?.[WORK_TEMPLATE_ANNOTATIONS.revision];
  const status = (w: ReturnType<typeof world>) => w.writer.lastStatus<HcpClusterStatus>();

  it("stamps a new work with the current revision and says so", async () => {
    const { w, works } = await readyWorld();
    expect(revisionOf(works()[0])).toBe("1");
    expect(status(w)?.workTemplate).toEqual({ workRevision: 1, currentRevision: 1 });
    expect(condition(status(w), "WorkTemplateCurrent")).toMatchObject({ status: "True", reason: "Current" });
  });

  it("holds a work only the template moved, and says so on the cluster", async () => {
    const { w, works, upgrade } = await readyWorld();
    upgrade(2);
    await w.reconcile();
    expect(works()).toHaveLength(1);
    expect(status(w)?.workTemplate).toEqual({ workRevision: 1, currentRevision: 2 });
    expect(condition(status(w), "WorkTemplateCurrent")).toMatchObject({
      status: "False",
      reason: "OlderTemplate",
    });
    expect(w.events.reasons()).toEqual([]);
  });

  it("writes at once with the new template when the customer changed the cluster", async () => {
    const { w, works, upgrade } = await readyWorld();
    upgrade(2);
    const c = w.clusters.get("default", "demo")!;
    w.clusters.set({
      ...c,
      metadata: { ...c.metadata, generation: 2 },
      spec: { ...c.spec, autoscaling: { maxNodesTotal: 7 } },
    });
    await w.reconcile();
    expect(works()).toHaveLength(2);
    expect(revisionOf(works()[1])).toBe("2");
    expect(status(w)?.workTemplate).toEqual({ workRevision: 2, currentRevision: 2 });
  });

  it("writes a held work once a RefreshWorkTemplate run allowed the current revision", async () => {
    const { w, works, observe, upgrade } = await readyWorld();
    upgrade(2);
    await w.reconcile();
    observe();
    const c = w.clusters.get("default", "demo")!;
    w.clusters.set({
      ...c,
      metadata: { ...c.metadata, annotations: { [WORK_TEMPLATE_ALLOWED_ANNOTATION]: "2" } },
    });
    await w.reconcile();
    expect(works()).toHaveLength(2);
    expect(revisionOf(works()[1])).toBe("2");
    expect(condition(status(w), "WorkTemplateCurrent")).toMatchObject({ status: "True" });
  });
});
