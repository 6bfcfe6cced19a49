/**
 * A work template moved by an operators upgrade, against the real apiservers, the agent transport
 * and the HyperShift simulator: a Ready cluster's work, built from revision N, is held when the
 * cluster controller's revision becomes N+1 and nothing about the cluster changed (the cluster says
 * so; the work stays as it was), and a RefreshWorkTemplate MaintenanceTask lets it be rewritten:
 * the run Succeeded, the work carries N+1. The revision is the stack's option, moved at runtime as
 * an upgrade would move it; the cluster is woken by an annotation, as the reconcile of every
 * cluster at the new operators' start would.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  MAINTENANCE_LABELS,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  WORK_LABELS,
  WORK_TEMPLATE_ALLOWED_ANNOTATION,
  WORK_TEMPLATE_ANNOTATIONS,
  WORK_TEMPLATE_REVISION,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
} from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { DIGEST_ANNOTATION } from "../../operators/runtime/apply.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const service = clientFor("service");
const customer = `worktemplate-${process.pid}`;
const READY_MS = 90_000;
const N = WORK_TEMPLATE_REVISION;

let running: TestStack;
let revision = N;
const taskName = `refresh-${process.pid}`;

beforeAll(async () => {
  running = await startTestStack("worktemplate", {
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    workTemplateRevision: () => revision,
  });
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  await service.delete(MaintenanceTaskResource, { name: taskName }).catch(() => undefined);
  await service.delete(HcpClusterResource, { name: "tpl", namespace: customer }).catch(() => undefined);
  await eventually(
    "the cluster deleted",
    async () => !(await service.find(HcpClusterResource, "tpl", customer)),
    READY_MS,
  ).catch(() => undefined);
  await running?.stop();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
});

const getCluster = async (): Promise<HcpCluster> =>
  (await service.find<HcpCluster>(HcpClusterResource, "tpl", customer)) ?? ({} as HcpCluster);

const conditionOf = (c: HcpCluster, type: string) => c.status?.conditions?.find((x) => x.type === type);

/** The cluster's own work (not a node pool's), as stored on the service cluster. */
async function clusterWork(uid: string): Promise<ManifestWork | undefined> {
  const list = await service.list<ManifestWork>(ManifestWorkResource, {
    labelSelector: `${WORK_LABELS.clusterUid}=${uid},!${WORK_LABELS.nodePool}`,
  });
  return list.items[0];
}

const revisionOf = (w: ManifestWork | undefined) =>
  w?.metadata.annotations?.[WORK_TEMPLATE_ANNOTATIONS.revision];

function newCluster(): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "tpl", namespace: customer };
  c.spec.dns.baseDomainPrefix = `tpl${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `worktemplate-${process.pid}-managed`;
  c.spec.platform.azure.tenantId = randomUUID();
  delete c.spec.placement;
  return c;
}

describe("a work built from an older template", () => {
  const seen: { uid?: string; work?: ManifestWork } = {};

  it("is built from the current revision when the cluster is made", async () => {
    await service.create(HcpClusterResource, newCluster());
    const ready = async () => conditionOf(await getCluster(), "Ready")?.status === "True";
    await eventually("the cluster Ready", ready, READY_MS);
    const cluster = await getCluster();
    seen.uid = cluster.metadata.uid ?? "";
    expect(cluster.status?.workTemplate).toEqual({ workRevision: N, currentRevision: N });
    expect(conditionOf(cluster, "WorkTemplateCurrent")).toMatchObject({ status: "True", reason: "Current" });
    seen.work = await clusterWork(seen.uid);
    expect(revisionOf(seen.work)).toBe(String(N));
  });

  it("is held after the template moves while the cluster did not change, and the cluster says so", async () => {
    revision = N + 1;
    const before = await getCluster();
    // What the new operators' first reconcile of every cluster does: look at it again.
    await service.mergePatch(
      HcpClusterResource,
      { name: "tpl", namespace: customer },
      { metadata: { annotations: { "test.hcp.aro.dev/wake": "1" } } },
    );
    const held = async () =>
      conditionOf(await getCluster(), "WorkTemplateCurrent")?.reason === "OlderTemplate";
    await eventually("WorkTemplateCurrent False OlderTemplate", held, READY_MS);
    const cluster = await getCluster();
    expect(cluster.metadata.generation).toBe(before.metadata.generation);
    expect(conditionOf(cluster, "WorkTemplateCurrent")).toMatchObject({ status: "False" });
    expect(conditionOf(cluster, "WorkTemplateCurrent")?.message).toContain(`revision ${N + 1} waits`);
    expect(cluster.status?.workTemplate).toEqual({ workRevision: N, currentRevision: N + 1 });
    // The status is written after the reconcile's decision on the work: the work was not written.
    const work = await clusterWork(seen.uid ?? "");
    expect(revisionOf(work)).toBe(String(N));
    expect(work?.metadata.annotations?.[DIGEST_ANNOTATION]).toBe(
      seen.work?.metadata.annotations?.[DIGEST_ANNOTATION],
    );
  });

  it("is rewritten by a RefreshWorkTemplate run, which Succeeds once the work carries the new revision", async () => {
    await service.create<MaintenanceTask>(MaintenanceTaskResource, {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "MaintenanceTask",
      metadata: { name: taskName },
      spec: { task: "RefreshWorkTemplate", clusters: { names: [`${customer}/tpl`] } },
    });
    const theRun = async (): Promise<MaintenanceRun | undefined> =>
      (
        await service.list<MaintenanceRun>(MaintenanceRunResource, {
          namespace: customer,
          labelSelector: `${MAINTENANCE_LABELS.task}=${taskName}`,
        })
      ).items[0];
    const succeeded = async () => (await theRun())?.status?.phase === "Succeeded";
    await eventually("the run Succeeded", succeeded, READY_MS);
    const run = await theRun();
    expect(run?.status?.steps?.map((s) => [s.name, s.state])).toEqual([["RewriteWork", "Succeeded"]]);
    const work = await clusterWork(seen.uid ?? "");
    expect(revisionOf(work)).toBe(String(N + 1));
    // Applied again (the template changes only the work's annotations here, so no new generation).
    expect(work?.metadata.annotations?.[DIGEST_ANNOTATION]).not.toBe(
      seen.work?.metadata.annotations?.[DIGEST_ANNOTATION],
    );
    const cluster = await getCluster();
    expect(cluster.metadata.annotations?.[WORK_TEMPLATE_ALLOWED_ANNOTATION]).toBe(String(N + 1));
    expect(cluster.status?.workTemplate).toEqual({ workRevision: N + 1, currentRevision: N + 1 });
    const current = async () => conditionOf(await getCluster(), "WorkTemplateCurrent")?.status === "True";
    await eventually("WorkTemplateCurrent True", current, READY_MS);
  });
});
