/**
 * The portal's backend against the real service apiserver: its informers fill the clusters list,
 * one cluster's page reads hcpctl's tree with the ARM operation the frontend's annotations record
 * and the events about it, a request ID finds hcpctl's trace, and a retry lands on the cluster as
 * the annotation the cluster controller reads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ARM_ANNOTATIONS,
  HcpClusterResource,
  type HcpCluster,
  type OperationDoc,
} from "../../operators/api/v1alpha1/index.ts";
import { RETRY_ANNOTATION } from "../../operators/api/v1alpha1/labels.ts";
import { KubePortalBackend } from "../../operators/portal/backend.ts";
import { eventType } from "../../operators/runtime/events.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { sampleCluster } from "../support/samples.ts";

describe("the portal's backend on the service cluster", () => {
  const client = clientFor("service");
  const stop = new AbortController();
  const backend = new KubePortalBackend(client);
  let ns: Awaited<ReturnType<typeof tempNamespace>>;

  beforeAll(async () => {
    ns = await tempNamespace(client, "portal");
    void backend.run(stop.signal);
  });
  afterAll(async () => {
    stop.abort();
    await ns.remove();
  });

  it("lists from the cache, shows one cluster's tree, operations and events, traces its request and records a retry", async () => {
    const correlation = `corr-${ns.name}`;
    const started = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, "Z");
    const doc: OperationDoc = {
      id: `00000000-0000-0000-0000-${Date.now().toString().padStart(12, "0").slice(-12)}`,
      request: "Create",
      resourceId: `/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/demo`,
      kind: "cluster",
      target: "demo",
      location: "westeurope",
      apiVersion: "2024-06-10-preview",
      correlationRequestId: correlation,
      startTime: started,
      lastTransitionTime: started,
      status: "Accepted",
    };
    const cluster = sampleCluster();
    cluster.metadata = {
      name: "demo",
      namespace: ns.name,
      annotations: {
        [ARM_ANNOTATIONS.operation]: doc.id,
        [ARM_ANNOTATIONS.operationRequest]: "Create",
        [ARM_ANNOTATIONS.operationDoc]: JSON.stringify(doc),
      },
    };
    const created = await client.create<HcpCluster>(HcpClusterResource, cluster);
    await client.create(eventType, {
      metadata: { name: `demo.${ns.name}`, namespace: ns.name },
      involvedObject: {
        apiVersion: created.apiVersion,
        kind: "HcpCluster",
        name: "demo",
        namespace: ns.name,
        uid: created.metadata.uid,
      },
      type: "Warning",
      reason: "QuotaExceeded",
      message: "the subscription's quota of public IPs is used up",
      count: 2,
      lastTimestamp: started,
      source: { component: "portal-backend-test" },
    });

    await eventually("the cluster in the portal's cache", () =>
      backend.clusters().some((c) => c.metadata.namespace === ns.name && c.metadata.name === "demo"),
    );
    const view = await backend.cluster(ns.name, "demo");
    expect(view?.tree.root.name).toBe("demo");
    expect(view?.operations).toEqual([
      expect.objectContaining({
        target: "HcpCluster/demo",
        id: doc.id,
        request: "Create",
        requestId: correlation,
      }),
    ]);
    expect(view?.events).toEqual([
      expect.objectContaining({
        object: "HcpCluster/demo",
        type: "Warning",
        reason: "QuotaExceeded",
        count: 2,
      }),
    ]);
    expect(await backend.cluster(ns.name, "absent")).toBeUndefined();

    const trace = await backend.trace(correlation.toUpperCase());
    expect(trace?.operations.map((o) => [o.operation.id, o.matchedBy, o.target.name])).toEqual([
      [doc.id, "correlationRequestId", "demo"],
    ]);
    expect(trace?.operations[0]?.hops[0]).toEqual(
      expect.objectContaining({ hop: "Accepted", state: "Done" }),
    );
    expect(await backend.trace(`no-such-${ns.name}`)).toBeUndefined();

    await backend.retry("bob@example.com", ns.name, "demo");
    const after = await client.get<HcpCluster>(HcpClusterResource, "demo", ns.name);
    expect(after.metadata.annotations?.[RETRY_ANNOTATION]).toMatch(
      /^\d{4}-\d\d-\d\dT.* by bob@example\.com$/,
    );
    await expect(backend.retry("bob@example.com", ns.name, "absent")).rejects.toThrow(
      `no HcpCluster ${ns.name}/absent`,
    );
  });
});
