/** The multi-cluster registry: clusters join and leave at run time; their informers follow. */
import { describe, expect, it } from "vitest";
import { ClusterRegistry, type ClusterEvent } from "../../operators/runtime/clusters.ts";
import { ClusterNotConnectedError } from "../../operators/runtime/errors.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { namespaceType, eventually } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";

describe("cluster registry", () => {
  it("adds and removes management clusters at run time", async () => {
    const registry = new ClusterRegistry();
    const events: ClusterEvent[] = [];
    registry.subscribe((e) => events.push(e));

    const one = registry.add("mgmt-1", { path: clusterInfo("mgmt-1").kubeconfigPath });
    registry.add("mgmt-2", { path: clusterInfo("mgmt-2").kubeconfigPath });
    const namespaces = one.informer(namespaceType);
    await eventually("mgmt-1 namespaces listed", () => namespaces.hasSynced());
    expect(namespaces.get("", "kube-system")).toBeDefined();
    expect(registry.names()).toEqual(["mgmt-1", "mgmt-2"]);
    // Each cluster is its own apiserver: the same path reaches a different server.
    expect(registry.get("mgmt-1").client.server).not.toBe(registry.get("mgmt-2").client.server);

    expect(registry.remove("mgmt-1")).toBe(true);
    expect(one.signal.aborted).toBe(true);
    expect(() => registry.get("mgmt-1")).toThrow(ClusterNotConnectedError);
    expect(events).toEqual([
      { type: "added", cluster: "mgmt-1" },
      { type: "added", cluster: "mgmt-2" },
      { type: "removed", cluster: "mgmt-1" },
    ]);
    registry.stopAll();
    expect(registry.names()).toEqual([]);
  });

  it("merges a second caller's indexers into the shared informer and refuses a clashing one", async () => {
    const registry = new ClusterRegistry();
    const cluster = registry.add("mgmt-1", { path: clusterInfo("mgmt-1").kubeconfigPath });
    const byName = (o: KubeObject): string[] => [o.metadata.name ?? ""];
    const byPhase = (o: KubeObject): string[] => [(o.status as { phase?: string } | undefined)?.phase ?? ""];
    const first = cluster.informer(namespaceType, { indexers: { name: byName } });
    await eventually("mgmt-1 namespaces listed", () => first.hasSynced());

    const second = cluster.informer(namespaceType, { indexers: { phase: byPhase } });
    expect(second).toBe(first);
    expect(second.byIndex("phase", "Active").map((n) => n.metadata.name)).toContain("kube-system");
    expect(second.byIndex("name", "kube-system")).toHaveLength(1);
    expect(() => cluster.informer(namespaceType, { indexers: { name: byPhase } })).toThrow(
      "informer namespaces already has an index name with a different function",
    );
    registry.stopAll();
  });

  it("caches through the callers' transform, and refuses a caller with another one (the cache has one shape)", async () => {
    const registry = new ClusterRegistry();
    const cluster = registry.add("mgmt-1", { path: clusterInfo("mgmt-1").kubeconfigPath });
    const nameOnly = (o: KubeObject): KubeObject => ({ metadata: { name: o.metadata.name ?? "" } });
    const first = cluster.informer(namespaceType, {
      labelSelector: "kubernetes.io/metadata.name",
      transform: nameOnly,
    });
    await eventually("mgmt-1 namespaces listed", () => first.hasSynced());
    expect(first.get("", "kube-system")).toEqual({ metadata: { name: "kube-system" } });
    expect(
      cluster.informer(namespaceType, { labelSelector: "kubernetes.io/metadata.name", transform: nameOnly }),
    ).toBe(first);
    expect(() => cluster.informer(namespaceType, { labelSelector: "kubernetes.io/metadata.name" })).toThrow(
      "the namespaces informer is shared and was made with another transform",
    );
    registry.stopAll();
  });
});
