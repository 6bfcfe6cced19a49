import { describe, expect, it } from "vitest";
import type { ManifestWork } from "../../api/work/v1.ts";
import { fromMessage, toBinaryMessage } from "../transport/mqtt.ts";
import {
  Action,
  DecodeError,
  Ext,
  MANIFEST_BUNDLE_DATA_TYPE,
  MAX_PACKET_BYTES,
  STATUS_RESYNC_BATCH,
  parseEventType,
} from "../types.ts";
import {
  bundleProblems,
  decodeSpecEvent,
  decodeStatusEvent,
  encodeSpecEvent,
  encodeStatusEvent,
} from "./manifestbundle.ts";
import {
  decodeSpecResyncRequest,
  decodeStatusResyncRequest,
  encodeSpecResyncRequest,
  encodeStatusResyncRequests,
} from "./resync.ts";

const work: ManifestWork = {
  apiVersion: "work.open-cluster-management.io/v1",
  kind: "ManifestWork",
  metadata: {
    name: "w1",
    namespace: "mgmt-1",
    uid: "6f1c2a3e-0000-4000-8000-000000000001",
    generation: 3,
    labels: { a: "b" },
  },
  spec: {
    workload: {
      manifests: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "x" } }],
    },
    deleteOption: { propagationPolicy: "Orphan" },
    executor: { subject: { type: "ServiceAccount", serviceAccount: { namespace: "n", name: "s" } } },
  },
};

describe("spec events", () => {
  it("carry Maestro's extensions and the bundle with its executer spelling", () => {
    const event = encodeSpecEvent(work, Action.create);
    expect(event.type).toBe(`${MANIFEST_BUNDLE_DATA_TYPE}.spec.create_request`);
    expect(event.source).toBe("maestro");
    expect(event.extensions).toMatchObject({
      [Ext.resourceId]: work.metadata.uid,
      [Ext.resourceVersion]: "3",
      [Ext.clusterName]: "mgmt-1",
      [Ext.originalSource]: "",
    });
    expect(JSON.parse(event.extensions[Ext.metadata]!)).toMatchObject({
      name: work.metadata.uid,
      namespace: "mgmt-1",
      labels: { a: "b" },
    });
    expect(event.data).toEqual({
      manifests: work.spec!.workload!.manifests,
      deleteOption: { propagationPolicy: "Orphan" },
      executer: work.spec!.executor,
    });
    expect(event.extensions[Ext.deletionTimestamp]).toBeUndefined();
  });

  it("travel in binary mode: ce-* user properties, content type, JSON payload", () => {
    const { payload, options } = toBinaryMessage(encodeSpecEvent(work, Action.update));
    const props = options.properties!;
    expect(props.contentType).toBe("application/json");
    expect(props.userProperties).toMatchObject({
      "ce-specversion": "1.0",
      "ce-source": "maestro",
      "ce-resourceversion": "3",
    });
    expect(props.userProperties!["ce-datacontenttype"]).toBeUndefined();
    const back = fromMessage({ payload, properties: props });
    const decoded = decodeSpecEvent(back, "mgmt-1");
    expect(decoded).toMatchObject({
      uid: work.metadata.uid,
      name: work.metadata.uid,
      generation: 3,
      originalSource: "maestro",
    });
    expect(decoded.spec.executor).toEqual(work.spec!.executor);
  });

  it("are read in structured mode too, with numeric extensions", () => {
    const body = {
      specversion: "1.0",
      id: "1",
      source: "maestro",
      type: `${MANIFEST_BUNDLE_DATA_TYPE}.spec.create_request`,
      resourceid: "r1",
      resourceversion: 2,
      clustername: "mgmt-1",
      data: { manifests: work.spec!.workload!.manifests },
    };
    const event = fromMessage({
      payload: Buffer.from(JSON.stringify(body)),
      properties: { contentType: "application/cloudevents+json" },
    });
    expect(decodeSpecEvent(event, "mgmt-1")).toMatchObject({ uid: "r1", generation: 2 });
  });

  it("are refused for another consumer, without a resource ID, or with a bad bundle", () => {
    const event = encodeSpecEvent(work, Action.create);
    expect(() => decodeSpecEvent(event, "mgmt-2")).toThrow(/event for consumer "mgmt-1"/);
    expect(() =>
      decodeSpecEvent({ ...event, extensions: { ...event.extensions, resourceid: "" } }, "mgmt-1"),
    ).toThrow(/lacks extension resourceid/);
    expect(() => decodeSpecEvent({ ...event, data: { manifests: [] } }, "mgmt-1")).toThrow(/no manifests/);
    let refusal: unknown;
    try {
      decodeSpecEvent({ ...event, extensions: { ...event.extensions, resourceversion: "x" } }, "mgmt-1");
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(DecodeError);
    expect(refusal).toMatchObject({ field: "extensions.resourceversion" });
    expect(() => fromMessage({ payload: Buffer.from("{}"), properties: {} })).toThrow(
      /neither a binary-mode nor a structured-mode/,
    );
  });

  it("take metadata as Maestro's Go server marshals it, and refuse metadata of the wrong types", () => {
    const event = encodeSpecEvent(work, Action.create);
    const withMeta = (metadata: unknown) => ({
      ...event,
      extensions: { ...event.extensions, metadata: JSON.stringify(metadata) },
    });
    const goMeta = { name: "w1", namespace: "mgmt-1", creationTimestamp: null, labels: null, generation: 3 };
    expect(decodeSpecEvent(withMeta(goMeta), "mgmt-1").name).toBe("w1");
    for (const bad of [["w1"], { name: 5 }, { labels: { a: 1 } }, { annotations: "x" }])
      expect(() => decodeSpecEvent(withMeta(bad), "mgmt-1")).toThrow(DecodeError);
  });

  it("for a deletion carry deletiontimestamp and need no valid data", () => {
    const deleting = { ...work, metadata: { ...work.metadata, deletionTimestamp: "2026-11-22T10:00:00Z" } };
    const event = encodeSpecEvent(deleting, Action.delete);
    expect(event.extensions[Ext.deletionTimestamp]).toBe("2026-11-22T10:00:00Z");
    expect(decodeSpecEvent({ ...event, data: undefined }, "mgmt-1").deletionTimestamp).toBe(
      "2026-11-22T10:00:00Z",
    );
  });

  it("for a deletion fit in one packet however large the manifests are", () => {
    const big = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big" },
      data: { x: "x".repeat(600_000) },
    };
    const deleting: ManifestWork = {
      ...work,
      metadata: { ...work.metadata, deletionTimestamp: "2026-11-22T10:00:00Z" },
      spec: { workload: { manifests: [big] } },
    };
    const event = encodeSpecEvent(deleting, Action.delete);
    expect(event.data).toBeUndefined();
    expect(toBinaryMessage(event).payload.byteLength).toBeLessThan(MAX_PACKET_BYTES);
    expect(decodeSpecEvent(event, "mgmt-1")).toMatchObject({ uid: work.metadata.uid, spec: {} });
  });
});

describe("bundleProblems", () => {
  it("names each manifest's fault and the size limit", () => {
    expect(
      bundleProblems([{ apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "x-" } }]),
    ).toEqual([
      "spec.workload.manifests[0].metadata.name is required",
      "spec.workload.manifests[0].metadata.generateName is not supported",
    ]);
    const big = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big" },
      data: { x: "y".repeat(500 * 1024) },
    };
    expect(bundleProblems([big])[0]).toMatch(/over the 512000-byte limit/);
    expect(bundleProblems([])).toEqual(["the work has no manifests"]);
  });
});

describe("status events", () => {
  const received = {
    uid: "r1",
    generation: 3,
    consumer: "mgmt-1",
    originalSource: "maestro",
    metadata: { name: "r1" },
  };
  const status = {
    conditions: [
      {
        type: "Deleted",
        status: "True" as const,
        lastTransitionTime: "2026-11-22T10:00:00Z",
        reason: "ManifestsDeleted",
        message: "",
      },
    ],
  };

  it("round-trip, flattening resourceStatus, and report Deleted", () => {
    const event = encodeStatusEvent(received, status, {
      agentId: "mgmt-1-work-agent",
      sequenceId: "1",
      statusHash: "h",
      action: Action.update,
    });
    expect(event.source).toBe("mgmt-1-work-agent");
    expect(event.data).toEqual({ conditions: status.conditions });
    const update = decodeStatusEvent(event);
    expect(update).toMatchObject({
      resourceId: "r1",
      resourceVersion: 3,
      consumer: "mgmt-1",
      deleted: true,
      statusHash: "h",
      sequenceId: "1",
    });
  });

  it("are refused when addressed to another source", () => {
    const event = encodeStatusEvent({ ...received, originalSource: "other" }, status, {
      agentId: "a",
      sequenceId: "1",
      statusHash: "h",
      action: Action.update,
    });
    expect(() => decodeStatusEvent(event)).toThrow(/unmatched original source id "other"/);
  });
});

describe("resync", () => {
  it("spec requests list versions for all sources", () => {
    const event = encodeSpecResyncRequest("agent", "mgmt-1", [{ resourceID: "r1", resourceVersion: 2 }]);
    expect(parseEventType(event.type)).toMatchObject({ subResource: "spec", action: "resync_request" });
    expect(event.extensions[Ext.originalSource]).toBe("");
    expect(decodeSpecResyncRequest(event)).toEqual({
      consumer: "mgmt-1",
      versions: [{ resourceID: "r1", resourceVersion: 2 }],
    });
  });

  it("status requests are batched at 1000 hashes, and an empty list is still one request", () => {
    const hashes = Array.from({ length: 2500 }, (_, i) => ({
      resourceID: `r${i}`,
      statusHash: "a".repeat(64),
    }));
    const events = encodeStatusResyncRequests("mgmt-1", hashes);
    expect(events.map((e) => decodeStatusResyncRequest(e).hashes.length)).toEqual([
      STATUS_RESYNC_BATCH,
      STATUS_RESYNC_BATCH,
      500,
    ]);
    for (const e of events) expect(toBinaryMessage(e).payload.length).toBeLessThan(512 * 1024);
    expect(encodeStatusResyncRequests("mgmt-1", []).map((e) => decodeStatusResyncRequest(e).hashes)).toEqual([
      [],
    ]);
  });
});
