import { describe, expect, it } from "vitest";
import type { KubeObject } from "../api/meta/v1.ts";
import type { BackedUpObject } from "./document.ts";
import { mapOwnerReferences, RestoreFailedError, restorePlan, restoreRanks } from "./restore.ts";

const API = "hcp.aro.dev/v1alpha1";
function held(type: string, name: string, extra: Partial<KubeObject["metadata"]> = {}): BackedUpObject {
  const [group, kind] = type.split("/");
  return {
    type,
    uid: `old-${name}`,
    object: {
      apiVersion: group ? `${group}/v1alpha1` : "v1",
      kind: kind!,
      metadata: { name, ...extra },
    },
  };
}
const name = (o: BackedUpObject): string => `${o.type.split("/")[1]}:${o.object.metadata.name}`;

describe("restore order", () => {
  it("creates namespaces, then Secrets and ConfigMaps, management clusters, clusters, then the rest", () => {
    const objects = [
      held("hcp.aro.dev/Rollout", "r"),
      held("hcp.aro.dev/NodePool", "np", { namespace: "s" }),
      held("hcp.aro.dev/HcpCluster", "c", { namespace: "s" }),
      held("/Secret", "key", { namespace: "hcp-system" }),
      held("hcp.aro.dev/ManagementCluster", "m"),
      held("/Namespace", "s"),
    ];
    expect(restorePlan(objects).map(name)).toEqual([
      "Namespace:s",
      "Secret:key",
      "ManagementCluster:m",
      "HcpCluster:c",
      "Rollout:r",
      "NodePool:np",
    ]);
  });

  it("puts an object after an owner of a later tier (a kubeconfig Secret, a rollout's task)", () => {
    const owned = (kind: string, owner: string) => ({
      ownerReferences: [{ apiVersion: API, kind, name: owner, uid: `old-${owner}` }],
    });
    const objects = [
      held("hcp.aro.dev/MaintenanceRun", "run", { namespace: "s", ...owned("MaintenanceTask", "task") }),
      held("hcp.aro.dev/MaintenanceTask", "task", owned("Rollout", "r")),
      held("/Secret", "kubeconfig", { namespace: "s", ...owned("BreakglassCredential", "bg") }),
      held("hcp.aro.dev/BreakglassCredential", "bg", { namespace: "s", ...owned("HcpCluster", "c") }),
      held("hcp.aro.dev/Rollout", "r"),
      held("hcp.aro.dev/HcpCluster", "c", { namespace: "s" }),
    ];
    const order = restorePlan(objects).map(name);
    const before = (a: string, b: string) => expect(order.indexOf(a)).toBeLessThan(order.indexOf(b));
    before("HcpCluster:c", "BreakglassCredential:bg");
    before("BreakglassCredential:bg", "Secret:kubeconfig");
    before("Rollout:r", "MaintenanceTask:task");
    before("MaintenanceTask:task", "MaintenanceRun:run");
  });

  it("groups objects in ranks created side by side: no object shares a rank with an owner", () => {
    const owned = (kind: string, owner: string) => ({
      ownerReferences: [{ apiVersion: API, kind, name: owner, uid: `old-${owner}` }],
    });
    const objects = [
      held("hcp.aro.dev/MaintenanceRun", "run", { namespace: "s", ...owned("MaintenanceTask", "task") }),
      held("hcp.aro.dev/NodePool", "np", { namespace: "s", ...owned("HcpCluster", "c") }),
      held("hcp.aro.dev/MaintenanceTask", "task", owned("Rollout", "r")),
      held("hcp.aro.dev/Rollout", "r"),
      held("hcp.aro.dev/HcpCluster", "c", { namespace: "s" }),
      held("hcp.aro.dev/HcpCluster", "d", { namespace: "s" }),
      held("/Secret", "key", { namespace: "hcp-system" }),
      held("/Namespace", "s"),
    ];
    expect(restoreRanks(objects).map((rank) => rank.map(name))).toEqual([
      ["Namespace:s"],
      ["Secret:key"],
      ["HcpCluster:c", "HcpCluster:d"],
      ["NodePool:np", "Rollout:r"],
      ["MaintenanceTask:task"],
      ["MaintenanceRun:run"],
    ]);
    expect(restorePlan(objects)).toEqual(restoreRanks(objects).flat());
  });

  it("ends on an ownership cycle instead of looping", () => {
    const a = held("hcp.aro.dev/Rollout", "a", {
      ownerReferences: [{ apiVersion: API, kind: "Rollout", name: "b", uid: "1" }],
    });
    const b = held("hcp.aro.dev/Rollout", "b", {
      ownerReferences: [{ apiVersion: API, kind: "Rollout", name: "a", uid: "2" }],
    });
    expect(restorePlan([a, b])).toHaveLength(2);
  });
});

describe("owner references", () => {
  it("point at the new owner's uid, by kind, namespace and name; an owner not here is dropped", () => {
    const uids = new Map([
      ["hcp.aro.dev/HcpCluster/s/c", "new-c"],
      ["hcp.aro.dev/Rollout//r", "new-r"],
    ]);
    const { kept, dropped } = mapOwnerReferences(
      [
        { apiVersion: API, kind: "HcpCluster", name: "c", uid: "old-c", controller: true },
        { apiVersion: API, kind: "Rollout", name: "r", uid: "old-r" },
        { apiVersion: API, kind: "HcpCluster", name: "gone", uid: "old-g" },
        { apiVersion: "apps/v1", kind: "Deployment", name: "d", uid: "old-d" },
      ],
      "s",
      (k) => uids.get(k),
    );
    expect(kept).toEqual([
      { apiVersion: API, kind: "HcpCluster", name: "c", uid: "new-c", controller: true },
      { apiVersion: API, kind: "Rollout", name: "r", uid: "new-r" },
    ]);
    expect(dropped.map((r) => r.name)).toEqual(["gone", "d"]);
  });
});

describe("a failed restore", () => {
  it("names each object that failed, the first as the cause, and how far the restore got", () => {
    const first = new Error("etcd timed out");
    const err = new RestoreFailedError(
      [
        { object: "HcpCluster s/c", error: first },
        { object: "HcpCluster s/d", error: new Error("again") },
      ],
      40,
      100,
    );
    expect(err.message).toBe(
      "restoring HcpCluster s/c: etcd timed out (and 1 more: HcpCluster s/d); 40 of 100 objects are restored, " +
        "the rest not: run the restore again from the same backup to finish it",
    );
    expect(err.cause).toBe(first);
    expect(err.objects).toEqual(["HcpCluster s/c", "HcpCluster s/d"]);
  });
});
