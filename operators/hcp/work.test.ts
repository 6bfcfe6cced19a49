import { describe, expect, it } from "vitest";
import {
  MANIFEST_WORK_CLEANUP_FINALIZER,
  ManifestWorkResource,
  type ManifestWorkObject,
} from "../api/work/v1.ts";
import { manifestWork, workChangeWakesSender } from "./work.ts";

const work: ManifestWorkObject = {
  apiVersion: "work.open-cluster-management.io/v1",
  kind: "ManifestWork",
  metadata: { name: "w", namespace: "mgmt-1", generation: 1, labels: { a: "b" }, resourceVersion: "1" },
};

describe("workChangeWakesSender", () => {
  it.each([
    { name: "its status", after: { ...work, status: { conditions: [] } }, wakes: true },
    { name: "its spec", after: { ...work, metadata: { ...work.metadata, generation: 2 } }, wakes: true },
    { name: "a label", after: { ...work, metadata: { ...work.metadata, labels: {} } }, wakes: true },
    {
      name: "its deletion",
      after: { ...work, metadata: { ...work.metadata, deletionTimestamp: "2030-01-01T00:00:00Z" } },
      wakes: true,
    },
    {
      name: "maestro-server's finalizer, nothing else",
      after: { ...work, metadata: { ...work.metadata, finalizers: ["f"], resourceVersion: "2" } },
      wakes: false,
    },
  ])("$name: wakes $wakes", ({ after, wakes }) => {
    expect(workChangeWakesSender(work, after)).toBe(wakes);
  });
});

describe("manifestWork", () => {
  it("carries maestro-server's finalizer from the create, so no patch has to add it", () => {
    const w = manifestWork({
      name: "w",
      consumer: "mgmt-1",
      labels: {},
      annotations: {},
      manifests: [],
      feedback: { type: ManifestWorkResource, name: "x", namespace: "ns", paths: [] },
    });
    expect(w.metadata.finalizers).toEqual([MANIFEST_WORK_CLEANUP_FINALIZER]);
  });
});
