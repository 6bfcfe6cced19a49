import { describe, expect, it } from "vitest";
import {
  ARM_REQUEST,
  NOW,
  armSnapshot,
  at,
  operationAnnotations,
  operationConfigMap,
  operationDoc,
} from "../../test/support/hcpctl-objects.ts";
import type { ClusterSnapshot } from "./model.ts";
import { plain } from "./paint.ts";
import { renderTrace } from "./render-trace.ts";
import { traceOperation, type Hop, type OperationTrace, type RequestTrace } from "./trace.ts";
import { findOperations, type TraceObjects } from "./trace-find.ts";

const now = new Date(NOW).toISOString();

function objectsOf(s: ClusterSnapshot, configMaps: TraceObjects["configMaps"] = []): TraceObjects {
  return { clusters: [s.cluster], pools: s.nodePools, configMaps };
}

/** The cluster's own works, as `trace` lists them (not its pools'). */
const clusterWorks = (s: ClusterSnapshot) =>
  s.works.filter((w) => !w.metadata.labels?.["hcp.aro.dev/nodepool"]);

function trace(
  s: ClusterSnapshot,
  id = ARM_REQUEST.correlationRequestId,
  configMaps: TraceObjects["configMaps"] = [],
): OperationTrace {
  const matches = findOperations(id, objectsOf(s, configMaps));
  expect(matches).toHaveLength(1);
  return traceOperation({ match: matches[0]!, works: clusterWorks(s), now });
}

const brief = (hops: Hop[]) => hops.map((h) => [h.hop, h.state, h.time, h.sincePreviousSeconds]);
const hop = (t: OperationTrace, name: Hop["hop"]): Hop => {
  const found = t.hops.find((h) => h.hop === name);
  if (!found) throw new Error(`no ${name} hop in ${t.hops.map((h) => h.hop).join(", ")}`);
  return found;
};

describe("trace of a Create through the ARM frontend", () => {
  it("goes through every hop, each with its time and the seconds since the previous one", () => {
    const t = trace(armSnapshot());
    expect(t).toMatchObject({
      matchedBy: "correlationRequestId",
      recordedIn: "cr",
      target: { kind: "HcpCluster", namespace: "customer", name: "demo" },
    });
    expect(brief(t.hops)).toEqual([
      ["Accepted", "Done", ARM_REQUEST.startTime, undefined],
      ["Written", "Done", at(600), 0],
      ["Observed", "Done", at(500), 100],
      ["Published", "Done", at(500), 0],
      ["Applied", "Done", at(200), 300],
      ["Reported", "Done", at(130), 70],
      // The end time as the frontend computes it for ARM, in milliseconds.
      ["Result", "Done", new Date(at(120)).toISOString(), 10],
    ]);
    expect(t.hops.every((h) => !h.upperBound)).toBe(true);
  });

  it("names the generations and what HyperShift reported", () => {
    const t = trace(armSnapshot());
    expect(hop(t, "Accepted").message).toBe(
      `Create of ${ARM_REQUEST.resourceId} (api-version 2024-06-10-preview)`,
    );
    expect(hop(t, "Written").message).toBe("generation 1");
    expect(hop(t, "Observed").message).toBe("observedGeneration 1");
    expect(hop(t, "Published")).toMatchObject({
      object: { kind: "ManifestWork", namespace: "mgmt-1" },
      message: "generation 1 sent to mgmt-1",
      timeFrom: "Published condition lastTransitionTime",
    });
    expect(hop(t, "Applied").message).toBe("generation 1 applied by the agent of mgmt-1");
    expect(hop(t, "Reported")).toMatchObject({
      object: { kind: "HostedCluster", name: "demo" },
      message: "Available True; HostedCluster generation 1, version 4.19.7",
    });
    expect(hop(t, "Result").message).toBe("Succeeded");
  });

  it("takes the controller's write of the work as when it observed, when that came before its status write", () => {
    const s = armSnapshot();
    const work = clusterWorks(s)[0]!;
    work.metadata.managedFields = work.metadata.managedFields!.map((m) =>
      m.subresource ? m : { ...m, time: at(550) },
    );
    expect(hop(trace(s), "Observed")).toMatchObject({
      time: at(550),
      timeFrom: "the controller's write of the ManifestWork for this request",
      sincePreviousSeconds: 50,
    });
  });

  it("is found by the client request id too, in any case", () => {
    const t = trace(armSnapshot(), ARM_REQUEST.clientRequestId.toUpperCase());
    expect(t.matchedBy).toBe("clientRequestId");
  });

  it("matches nothing for an id no request carried", () => {
    expect(findOperations("corr-9999", objectsOf(armSnapshot()))).toEqual([]);
  });
});

describe("a hop not reached yet", () => {
  it("waits for the agent to apply the generation sent", () => {
    const s = armSnapshot();
    const work = clusterWorks(s)[0]!;
    work.metadata.generation = 2;
    for (const c of work.status!.conditions!) if (c.type === "Published") c.observedGeneration = 2;
    s.cluster.status!.conditions = s.cluster.status!.conditions!.map((c) =>
      c.type === "Ready"
        ? { ...c, status: "False", reason: "WaitingForAgent", lastTransitionTime: at(100) }
        : c.type === "Progressing"
          ? { ...c, status: "True", reason: "WaitingForAgent", lastTransitionTime: at(100) }
          : c,
    );
    const t = trace(s);
    expect(hop(t, "Applied")).toMatchObject({
      state: "Pending",
      message: "generation 2 sent, 1 applied",
      waitingFor: "the agent of mgmt-1 to apply generation 2",
    });
    expect(hop(t, "Applied").time).toBeUndefined();
    expect(hop(t, "Reported")).toMatchObject({
      state: "Pending",
      object: { kind: "HostedCluster", name: "demo" },
      waitingFor: "the agent to apply generation 2",
    });
    expect(hop(t, "Result")).toMatchObject({ state: "Pending", message: "Provisioning" });
  });

  it("says a first install is installing, not updating", () => {
    const s = armSnapshot();
    const values = clusterWorks(s)[0]!.status!.resourceStatus!.manifests!.find(
      (m) => m.resourceMeta.kind === "HostedCluster",
    )!.statusFeedback!.values!;
    const installing = values.filter((v) => v.name !== "completedVersion");
    installing.push({
      name: "latestUpdate",
      fieldValue: { type: "JsonRaw", jsonRaw: JSON.stringify({ state: "Partial", version: "4.19.7" }) },
    });
    values.splice(0, values.length, ...installing);
    expect(hop(trace(s), "Reported").message).toMatch(/, installing 4\.19\.7$/);
  });

  it("waits for the controller to write the work for this request", () => {
    const s = armSnapshot();
    clusterWorks(s)[0]!.metadata.annotations = { "hcp.aro.dev/correlation-request-id": "corr-older" };
    const t = trace(s);
    for (const name of ["Published", "Applied", "Reported"] as const)
      expect(hop(t, name)).toMatchObject({
        state: "Pending",
        waitingFor: `the cluster controller to write ManifestWork ${s.cluster.metadata.uid!} for this request`,
      });
  });

  it("waits for the controller to get through an update's generation; the write's time from managedFields", () => {
    const s = armSnapshot();
    const doc = operationDoc({ request: "Update", startTime: at(60), lastTransitionTime: at(60) });
    s.cluster.metadata.annotations = operationAnnotations(doc);
    s.cluster.metadata.generation = 2;
    s.cluster.metadata.managedFields = [
      {
        manager: "node",
        operation: "Update",
        time: at(60),
        fieldsV1: { "f:metadata": { "f:annotations": { "f:hcp.aro.dev/arm-operation-id": {} } } },
      },
      { manager: "cluster-controller", operation: "Apply", subresource: "status", time: at(30) },
    ];
    const t = trace(s);
    expect(hop(t, "Written")).toMatchObject({ state: "Done", time: at(60), message: "generation 2" });
    expect(hop(t, "Written").upperBound).toBeUndefined();
    // The same manager wrote the CR again later: the write's time is then only a bound.
    s.cluster.metadata.managedFields[0]!.time = at(20);
    expect(hop(trace(s), "Written")).toMatchObject({ time: at(20), upperBound: true });
    expect(hop(t, "Observed")).toMatchObject({
      state: "Pending",
      message: "observedGeneration 1 of 2",
      waitingFor:
        "the cluster controller to get through generation 2; Ready True AsExpected: The cluster is ready on mgmt-1",
    });
    expect(hop(t, "Result")).toMatchObject({ state: "Pending", message: "Accepted" });
  });

  it("fails where maestro-server refuses the work for good", () => {
    const s = armSnapshot();
    const work = clusterWorks(s)[0]!;
    work.status!.conditions = work.status!.conditions!.map((c) =>
      c.type === "Published"
        ? { ...c, status: "False", reason: "BundleTooLarge", message: "The bundle is 300 KiB" }
        : c,
    );
    expect(hop(trace(s), "Published")).toMatchObject({
      state: "Failed",
      message: "BundleTooLarge: The bundle is 300 KiB",
    });
  });

  it("gives only a bound when the condition did not change after the request", () => {
    const s = armSnapshot();
    const doc = operationDoc({ request: "Update", startTime: at(150), lastTransitionTime: at(150) });
    s.cluster.metadata.annotations = operationAnnotations(doc);
    const t = trace(s);
    // Published and Applied changed before the request: only the work's later status write bounds them.
    expect(hop(t, "Published")).toMatchObject({ time: at(130), upperBound: true });
    expect(hop(t, "Applied")).toMatchObject({ time: at(130), upperBound: true });
    expect(hop(t, "Reported")).toMatchObject({ state: "Done", time: at(130) });
  });

  it("says a hop was reached before a request that did not change its generation (a change of tags)", () => {
    const s = armSnapshot();
    const doc = operationDoc({ request: "Update", startTime: at(90), lastTransitionTime: at(90) });
    s.cluster.metadata.annotations = operationAnnotations(doc);
    const t = trace(s);
    expect(hop(t, "Published")).toMatchObject({
      beforeRequest: true,
      message: "generation 1 sent to mgmt-1 before the request (its generation was not changed by it)",
    });
    expect(hop(t, "Applied")).toMatchObject({ beforeRequest: true });
    expect(hop(t, "Published").time).toBeUndefined();
    expect(hop(t, "Reported")).toMatchObject({
      state: "Done",
      message:
        "Available True since before the request: nothing changed; HostedCluster generation 1, version 4.19.7",
    });
    expect(hop(t, "Reported").time).toBeUndefined();
  });
});

describe("older requests", () => {
  it("traces a request in the history as far as its document tells", () => {
    const s = armSnapshot();
    const earlier = operationDoc({ status: "Succeeded", endTime: at(120), lastTransitionTime: at(120) });
    const later = operationDoc({
      id: "7d3e91a0-0000-4000-8000-000000000002",
      request: "Update",
      correlationRequestId: "corr-0002",
      clientRequestId: "client-0002",
      startTime: at(60),
    });
    s.cluster.metadata.annotations = {
      ...operationAnnotations(later),
      "hcp.aro.dev/arm-operation-history": JSON.stringify([earlier]),
    };
    const t = trace(s);
    expect(t.recordedIn).toBe("history");
    expect(brief(t.hops)).toEqual([
      ["Accepted", "Done", ARM_REQUEST.startTime, undefined],
      ["Written", "Unknown", undefined, undefined],
      ["Observed", "Unknown", undefined, undefined],
      ["Published", "Unknown", undefined, undefined],
      ["Applied", "Unknown", undefined, undefined],
      ["Reported", "Unknown", undefined, undefined],
      ["Result", "Done", at(120), 480],
    ]);
    expect(hop(t, "Observed").message).toBe(
      "superseded: the CR now carries a later Update (operation 7d3e91a0-0000-4000-8000-000000000002)",
    );
  });

  it("traces a Delete whose CR is gone from its ConfigMap", () => {
    const del = operationDoc({
      id: "7d3e91a0-0000-4000-8000-000000000003",
      request: "Delete",
      correlationRequestId: "corr-0003",
      status: "Deleting",
    });
    const t = traceOperation({
      match: findOperations("corr-0003", {
        clusters: [],
        pools: [],
        configMaps: [operationConfigMap("customer", del)],
      })[0]!,
      works: [],
      now,
    });
    expect(t.recordedIn).toBe("configmap");
    expect(brief(t.hops)).toEqual([
      ["Accepted", "Done", ARM_REQUEST.startTime, undefined],
      ["Deleting", "Done", undefined, undefined],
      ["WorksRemoved", "Done", undefined, undefined],
      ["Removed", "Done", undefined, undefined],
      ["Result", "Done", undefined, undefined],
    ]);
    expect(hop(t, "Result").message).toBe("Succeeded");
    expect(hop(t, "Removed").message).toBe("the CR is gone (when is not recorded)");
  });

  it("does not take a CR made again under the name for the one a Delete removed", () => {
    const s = armSnapshot();
    const del = operationDoc({
      id: "7d3e91a0-0000-4000-8000-000000000004",
      request: "Delete",
      correlationRequestId: "corr-0004",
      status: "Deleting",
    });
    const t = trace(s, "corr-0004", [operationConfigMap("customer", del)]);
    expect(t.hops.slice(1, -1).map((h) => [h.hop, h.state, h.message])).toEqual(
      ["Deleting", "WorksRemoved", "Removed"].map((h) => [
        h,
        "Unknown",
        `superseded: the CR now carries a later Create (operation ${ARM_REQUEST.operationId})`,
      ]),
    );
  });

  it("shows what holds a Delete still running", () => {
    const s = armSnapshot();
    const del = operationDoc({ request: "Delete", status: "Deleting" });
    s.cluster.metadata.annotations = {
      ...operationAnnotations(del),
      "hcp.aro.dev/arm-operation": "",
    };
    s.cluster.metadata.deletionTimestamp = at(30);
    const work = clusterWorks(s)[0]!;
    work.metadata.deletionTimestamp = at(29);
    const t = traceOperation({
      match: findOperations(
        ARM_REQUEST.correlationRequestId,
        objectsOf(s, [operationConfigMap("customer", del)]),
      )[0]!,
      works: [work],
      now,
    });
    expect(brief(t.hops).map(([name, state]) => [name, state])).toEqual([
      ["Accepted", "Done"],
      ["Deleting", "Done"],
      ["WorksRemoved", "Pending"],
      ["Removed", "Pending"],
      ["Result", "Pending"],
    ]);
    expect(hop(t, "Deleting")).toMatchObject({ time: at(30), message: "finalizers: hcp.aro.dev/cluster" });
    expect(hop(t, "WorksRemoved").waitingFor).toBe(
      `the works to go: ${work.metadata.name!} (the deletion is not published to the agent yet)`,
    );
    expect(hop(t, "Removed").waitingFor).toBe("the finalizers hcp.aro.dev/cluster to be removed");
  });

  it("prefers a ConfigMap's frozen document to the CR's, and traces the CR live", () => {
    const s = armSnapshot();
    const frozen = operationDoc({ status: "Succeeded", endTime: at(121), lastTransitionTime: at(121) });
    const t = trace(s, ARM_REQUEST.correlationRequestId, [operationConfigMap("customer", frozen)]);
    expect(t.recordedIn).toBe("configmap");
    expect(hop(t, "Applied").state).toBe("Done");
    expect(hop(t, "Result")).toMatchObject({ state: "Done", time: at(121) });
  });
});

describe("renderTrace", () => {
  it("draws one table per operation, pending hops with what they wait for", () => {
    const s = armSnapshot();
    const work = clusterWorks(s)[0]!;
    work.metadata.generation = 2;
    const doc: RequestTrace = {
      apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
      kind: "RequestTrace",
      id: ARM_REQUEST.correlationRequestId,
      observedAt: now,
      operations: [trace(s)],
    };
    const lines = renderTrace(doc, plain).split("\n");
    expect(lines[0]).toBe(`Operation ${ARM_REQUEST.operationId}: Create of ${ARM_REQUEST.resourceId}`);
    expect(lines[1]).toBe(
      "  HcpCluster/demo in customer; correlation id corr-0001; client request id client-0001",
    );
    expect(lines[2]).toMatch(/^HOP\s+STATE\s+TIME\s+\+PREV\s+OBJECT\s+MESSAGE$/);
    expect(lines[3]).toMatch(
      /^Accepted\s+Done\s+2026-09-01T11:50:00Z\s+-\s+Operation\/7d3e91a0-\S+\s+Create of \/subscriptions\//,
    );
    expect(lines[5]).toMatch(
      /^Observed\s+Done\s+2026-09-01T11:51:40Z\s+\+100s\s+HcpCluster\/demo\s+observedGeneration 1$/,
    );
    expect(lines[6]).toMatch(
      /^Published\s+Pending\s+-\s+-\s+ManifestWork\/\S+\s+generation 2 written, 1 published; waiting for maestro-server to publish generation 2 to mgmt-1$/,
    );
    expect(lines[7]).toMatch(
      /^Applied\s+Pending\s+-\s+-\s+ManifestWork\/\S+\s+generation 2 sent, 1 applied; waiting for the agent/,
    );
  });
});
