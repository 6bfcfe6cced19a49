import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube.ts";
import { readsStatusView, statusView, watchTransform } from "./objects.ts";

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

  it("keeps the spec fields our feedback reads of that kind, and no other", () => {
    const secretEncryption = { type: "kms", kms: { azure: { activeKey: { keyName: "k" } } } };
    const hc = {
      apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster",
      metadata: { name: "demo" },
      spec: { platform: { type: "Azure" }, secretEncryption },
    } as unknown as KubeObject;
    const hostedClusters = { group: "hypershift.openshift.io", plural: "hostedclusters" };
    expect(watchTransform(hostedClusters)(hc)).toMatchObject({ spec: { secretEncryption } });
    expect(watchTransform(hostedClusters)(hc)).not.toHaveProperty("spec.platform");
    // The same fields in another kind are not kept.
    expect(watchTransform({ group: "hypershift.openshift.io", plural: "nodepools" })(hc)).not.toHaveProperty(
      "spec",
    );
    expect(watchTransform({ group: "velero.io", plural: "schedules" })(hc)).not.toHaveProperty("spec");
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

  it.each([
    ".spec.secretEncryption.kms.azure.activeKey",
    ".spec.secretEncryption",
    "spec.paused",
    ".spec.paused[0]",
  ])("%s reads a spec field the view keeps", (path) =>
    expect(readsStatusView(path, ["secretEncryption", "paused"])).toBe(true),
  );

  it.each([
    ".spec",
    ".spec.platform",
    ".spec..activeKey",
    ".spec.secretEncryptionX",
    ".spec['paused']",
    ".spec.*",
  ])("%s may read spec fields it does not keep", (path) =>
    expect(readsStatusView(path, ["secretEncryption", "paused"])).toBe(false),
  );
});
