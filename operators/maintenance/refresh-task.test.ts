import { describe, expect, it } from "vitest";
import {
  WORK_TEMPLATE_ALLOWED_ANNOTATION,
  type HcpCluster,
  type HcpClusterWorkTemplateStatus,
  type MaintenanceRun,
} from "../api/v1alpha1/index.ts";
import { sampleCluster } from "../../test/support/samples.ts";
import { refreshWorkTemplate, type WorkTemplateRefresh } from "./refresh-task.ts";
import type { StepOutcome } from "./step.ts";

/** The operations over an in-memory cluster: what was allowed is recorded, and a race can be staged. */
class FakeRefresh implements WorkTemplateRefresh {
  allowed: Array<{ revision: number; resourceVersion: string | undefined }> = [];
  nextAnswer: "allowed" | "changed" = "allowed";
  revision = (): number => 3;
  allow(cluster: HcpCluster, revision: number): Promise<"allowed" | "changed"> {
    if (this.nextAnswer === "changed") return Promise.resolve("changed");
    this.allowed.push({ revision, resourceVersion: cluster.metadata.resourceVersion });
    return Promise.resolve("allowed");
  }
}

const run: MaintenanceRun = {
  metadata: { name: "refresh-a", namespace: "default" },
  spec: { task: "refresh", taskType: "RefreshWorkTemplate", clusterRef: { name: "demo" } },
};

function cluster(opts: { allowed?: string; workTemplate?: HcpClusterWorkTemplateStatus }): HcpCluster {
  const c = sampleCluster();
  return {
    ...c,
    metadata: {
      name: "demo",
      namespace: "default",
      resourceVersion: "42",
      ...(opts.allowed && { annotations: { [WORK_TEMPLATE_ALLOWED_ANNOTATION]: opts.allowed } }),
    },
    ...(opts.workTemplate && { status: { workTemplate: opts.workTemplate } }),
  };
}

async function execute(ops: FakeRefresh, c: HcpCluster): Promise<StepOutcome> {
  const [step] = refreshWorkTemplate(ops).steps;
  return step!.execute({ run, cluster: c, now: new Date(), signal: new AbortController().signal });
}

describe("RefreshWorkTemplate", () => {
  it("is done, writing nothing, when the work already carries the current revision", async () => {
    const ops = new FakeRefresh();
    const outcome = await execute(ops, cluster({ workTemplate: { workRevision: 3, currentRevision: 3 } }));
    expect(outcome).toMatchObject({ kind: "done" });
    expect(ops.allowed).toEqual([]);
  });

  it("allows the current revision under the resourceVersion it read, then waits for the rewrite", async () => {
    const ops = new FakeRefresh();
    const held = cluster({ allowed: "2", workTemplate: { workRevision: 2, currentRevision: 3 } });
    const outcome = await execute(ops, held);
    expect(ops.allowed).toEqual([{ revision: 3, resourceVersion: "42" }]);
    expect(outcome).toMatchObject({ kind: "waiting" });
  });

  it("waits without writing again once allowed, until the status shows the work rewritten", async () => {
    const ops = new FakeRefresh();
    const allowed = cluster({ allowed: "3", workTemplate: { workRevision: 2, currentRevision: 3 } });
    const outcome = await execute(ops, allowed);
    expect(outcome).toMatchObject({ kind: "waiting" });
    expect(outcome.message).toContain("from template revision 2 to 3");
    expect(ops.allowed).toEqual([]);
    const done = await execute(
      ops,
      cluster({ allowed: "3", workTemplate: { workRevision: 3, currentRevision: 3 } }),
    );
    expect(done).toMatchObject({ kind: "done" });
  });

  it("looks again soon when the cluster changed under it, having written nothing", async () => {
    const ops = new FakeRefresh();
    ops.nextAnswer = "changed";
    const outcome = await execute(ops, cluster({ workTemplate: { workRevision: 2, currentRevision: 3 } }));
    expect(outcome).toMatchObject({ kind: "waiting", requeueMs: 1_000 });
    expect(ops.allowed).toEqual([]);
  });

  it("waits for a cluster whose status does not report its work's revision yet", async () => {
    const ops = new FakeRefresh();
    const outcome = await execute(ops, cluster({ allowed: "3" }));
    expect(outcome).toMatchObject({ kind: "waiting" });
    expect(outcome.message).toContain("to report its work's template revision");
  });
});
