import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube.ts";
import { readsStatusView, statusView } from "./objects.ts";

describe("statusView", () => {
  it("keeps the identity, metadata without managedFields, and the status; drops the spec", () => {
    const metadata = {
      name: "demo",
      namespace: "ocm-demo",
      uid: "u1",
      generation: 3,
      resourceVersion: "42",
      deletionTimestamp: "2026-11-27T00:00:00Z",
    };
    const status = { conditions: [{ type: "Available", status: "True" }] };
    const identity = { apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedCluster" };
    const hc = {
      ...identity,
      metadata: { ...metadata, managedFields: [{ manager: "agent" }] },
      spec: { platform: { azure: { subscriptionId: "s" } } },
      status,
    } as unknown as KubeObject;
    expect(statusView(hc)).toEqual({ ...identity, metadata, status });
    // The watch's event is left as it came.
    expect(hc.metadata.managedFields).toHaveLength(1);
  });

  it("has no status for an object without one", () => {
    expect(statusView({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } })).toEqual({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "ns" },
    });
  });
});

describe("readsStatusView", () => {
  it.each([
    ".status.conditions",
    'status.conditions[?(@.type=="Available")].status',
    ".status",
    ".metadata.generation",
    " .status.version.history[0] ",
    ".status[0]",
  ])("%s reads metadata or status", (path) => expect(readsStatusView(path)).toBe(true));

  it.each([".spec.replicas", ".data.key", "..status", ".statusReport", "['status']", ".metadataX", ""])(
    "%s may read beyond them",
    (path) => expect(readsStatusView(path)).toBe(false),
  );
});
