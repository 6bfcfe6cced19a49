import { describe, expect, it } from "vitest";
import { moved, type PhysicalSet } from "./physical-floor.ts";

const set = {
  hostedNamespace: "clusters-abc",
  hostedCluster: { metadata: { name: "demo.1", namespace: "clusters-abc" } },
} as unknown as PhysicalSet;
const to = { hosted: "pfm-7", controlPlane: "pfm-7-demo-1", suffix: "pf7" };

describe("moved", () => {
  it("renames the hosted namespace and carries the objects in it and in the control plane's", () => {
    const ns = moved(set, { kind: "Namespace", metadata: { name: "clusters-abc" } }, to);
    expect(ns.metadata.name).toBe("pfm-7");
    const secret = moved(set, { kind: "Secret", metadata: { name: "pull", namespace: "clusters-abc" } }, to);
    expect(secret.metadata).toEqual({ name: "pull", namespace: "pfm-7" });
    const cp = moved(
      set,
      { kind: "ConfigMap", metadata: { name: "root-ca", namespace: "clusters-abc-demo-1" } },
      to,
    );
    expect(cp.metadata.namespace).toBe("pfm-7-demo-1");
  });

  it("keeps copies elsewhere apart by name", () => {
    const schedule = moved(set, { kind: "Schedule", metadata: { name: "daily", namespace: "velero" } }, to);
    expect(schedule.metadata).toEqual({ name: "daily-pf7", namespace: "velero" });
  });

  it("sends what a creator sends: no identity, owners or status the apiserver assigned", () => {
    const copy = moved(
      set,
      {
        kind: "Secret",
        metadata: {
          name: "kubeconfig",
          namespace: "clusters-abc",
          uid: "u",
          resourceVersion: "9",
          ownerReferences: [{ apiVersion: "v1", kind: "X", name: "y", uid: "z" }],
          labels: { a: "b" },
        },
        status: { phase: "x" },
      },
      to,
    );
    expect(copy.metadata).toEqual({ name: "kubeconfig", namespace: "pfm-7", labels: { a: "b" } });
    expect(copy).not.toHaveProperty("status");
  });
});
