/**
 * An operation's status says how far it has come and what it waits on: `percentComplete` and, in
 * `properties`, the step and its condition's message, read from the CR on each poll. No controller
 * runs here: the test writes the cluster's and the node pool's status as their controllers do.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HCP_CLUSTER_STEPS,
  HcpClusterResource,
  NODE_POOL_STEPS,
  NodePoolResource,
} from "../../operators/api/v1alpha1/index.ts";
import {
  clusterCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../../operators/frontend/mapping/names.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import type { KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { clientFor } from "../support/fixtures.ts";
import { summaryConditions, writeSummaryStatus } from "../support/summary-conditions.ts";
import { clusterBody, clusterPath, nodePoolBody, nodePoolPath, type ArmClient } from "../support/frontend.ts";
import {
  removeSubscription,
  settleCluster,
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const service = clientFor("service");
const sub = randomUUID();
const ns = subscriptionNamespace(sub);
const rg = "Rg-Progress";
let fixture: FrontendFixture;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, "Z");

/** Status as a controller writes it: the first `done` steps True, the next one pending with `message`. */
async function writeSteps(
  type: ResourceType,
  name: string,
  steps: readonly string[],
  at: { done: number; message: string },
): Promise<void> {
  const cr = await service.get<KubeObject>(type, name, ns);
  const generation = cr.metadata.generation ?? 1;
  const step = (t: string, status: "True" | "False", message: string): Condition => ({
    type: t,
    status,
    reason: status === "True" ? "AsExpected" : "Waiting",
    message,
    lastTransitionTime: now(),
    observedGeneration: generation,
  });
  const conditions = [
    ...summaryConditions("progressing", generation, { reason: "Waiting", message: at.message }),
    ...steps.slice(0, at.done).map((t) => step(t, "True", `${t} done`)),
    ...steps.slice(at.done, at.done + 1).map((t) => step(t, "False", at.message)),
  ];
  await service.mergePatch(
    type,
    { name, namespace: ns },
    { status: { observedGeneration: generation, conditions } },
    "status",
  );
}

async function poll(url: string): Promise<Json> {
  const r = await arm.send("GET", url);
  expect(r.status).toBe(200);
  return r.body as Json;
}

beforeAll(async () => {
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-progress",
    headers: { "x-ms-home-tenant-id": TENANT },
  });
  arm = fixture.arm;
  expect((await fixture.putSubscription(sub, "Registered", TENANT)).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  await removeSubscription(service, sub).catch(() => undefined);
});

describe("an operation says how far it has come and what it waits on", () => {
  it("a cluster create: 0 until the controller takes it up, then its steps, then 100", async () => {
    const created = await arm.send("PUT", clusterPath(sub, rg, "Steps"), { body: clusterBody(sub) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const url = created.headers["azure-asyncoperation"]!;

    const untouched = await poll(url);
    expect(untouched).toMatchObject({ status: "Accepted", percentComplete: 0 });
    expect(untouched["properties"].message).toContain("cluster controller");

    const name = clusterCRName(rg, "Steps");
    const message = "Waiting for the NS delegation of the cluster's zone in the parent zone";
    await writeSteps(HcpClusterResource, name, HCP_CLUSTER_STEPS, { done: 4, message });
    const midway = await poll(url);
    expect(midway).toMatchObject({
      status: "Provisioning",
      percentComplete: Math.floor((100 * 4) / HCP_CLUSTER_STEPS.length),
      properties: { step: "DnsDelegated", message },
    });

    await writeSteps(HcpClusterResource, name, HCP_CLUSTER_STEPS, {
      done: HCP_CLUSTER_STEPS.length - 1,
      message: "x",
    });
    expect((await poll(url))["percentComplete"]).toBe(Math.floor((100 * 10) / 11));

    await settleCluster(service, { sub, rg, name: "Steps" });
    const done = await poll(url);
    expect(done).toMatchObject({ status: "Succeeded", percentComplete: 100 });
    expect(done["properties"]).toBeUndefined();
  });

  it("a node pool create names the pool's step", async () => {
    const created = await arm.send("PUT", nodePoolPath(sub, rg, "Steps", "pool"), { body: nodePoolBody() });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const message = "Waiting for the agent on mc-1 to apply the NodePool";
    await writeSteps(NodePoolResource, nodePoolCRName(rg, "Steps", "pool"), NODE_POOL_STEPS, {
      done: 2,
      message,
    });
    expect(await poll(created.headers["azure-asyncoperation"]!)).toMatchObject({
      status: "Provisioning",
      percentComplete: 50,
      properties: { step: "NodePoolApplied", message },
    });
  });

  it("a failed operation carries its error and no share", async () => {
    const name = clusterCRName(rg, "Steps");
    const patched = await arm.send("PATCH", clusterPath(sub, rg, "Steps"), {
      body: { properties: { api: { authorizedCidrs: ["192.0.2.0/24"] } } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(202);
    // HcpCluster Degraded by a user error: InvalidSubnet, "the subnet does not exist".
    await writeSummaryStatus(service, HcpClusterResource, { name, namespace: ns }, { state: "degraded" });
    const failed = await poll(patched.headers["azure-asyncoperation"]!);
    expect(failed).toMatchObject({ status: "Failed", error: { code: "InvalidSubnet" } });
    expect(failed["percentComplete"]).toBeUndefined();
  });
});
