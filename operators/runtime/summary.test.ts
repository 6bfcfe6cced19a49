import { describe, expect, it } from "vitest";
import { summariseManagedFields } from "./apply.ts";
import { StringPool } from "./intern.ts";
import type { KubeObject } from "./kube.ts";

/** An object as the apiserver sends it: every copy parsed on its own, as a watch delivers them. */
const sent = (name: string, manager = "cluster-controller"): KubeObject =>
  JSON.parse(
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace: "ns",
        managedFields: [
          {
            manager,
            operation: "Apply",
            time: `2026-11-27T01:00:0${name.length % 10}Z`,
            fieldsV1: { "f:spec": { "f:a": {} } },
          },
          {
            manager: "maestro-server",
            operation: "Apply",
            subresource: "status",
            fieldsV1: { "f:status": {} },
          },
        ],
      },
    }),
  ) as KubeObject;

describe("summariseManagedFields", () => {
  it("keeps who owns which top-level fields, and one shared, frozen summary for objects that agree", () => {
    const a = summariseManagedFields(sent("a"));
    const b = summariseManagedFields(sent("bb"));
    expect(a.metadata.managedFields).toEqual([
      { manager: "cluster-controller", operation: "Apply", fieldsV1: { "f:spec": {} } },
      { manager: "maestro-server", operation: "Apply", subresource: "status", fieldsV1: { "f:status": {} } },
    ]);
    // The write times differ; the summaries do not keep them, so the two share one.
    expect(b.metadata.managedFields).toBe(a.metadata.managedFields);
    expect(Object.isFrozen(a.metadata.managedFields?.[0]?.fieldsV1)).toBe(true);
    expect(() => {
      (a.metadata.managedFields as unknown[]).push({});
    }).toThrow(TypeError);
  });

  it("does not share summaries that differ", () => {
    const a = summariseManagedFields(sent("a", "one"));
    const b = summariseManagedFields(sent("a", "two"));
    expect(b.metadata.managedFields).not.toBe(a.metadata.managedFields);
    expect(b.metadata.managedFields?.[0]?.manager).toBe("two");
  });

  it("stays correct past its bound when every write names a new manager", () => {
    const many = Array.from({ length: 2_100 }, (_, i) => summariseManagedFields(sent("x", `m-${i}`)));
    expect(many.map((o) => o.metadata.managedFields?.[0]?.manager)).toEqual(
      Array.from({ length: 2_100 }, (_, i) => `m-${i}`),
    );
  });

  it("leaves the shared summary alone when an informer pools the object's strings", () => {
    const pool = new StringPool();
    const cached = pool.internAll(summariseManagedFields(sent("a")));
    const again = pool.internAll(summariseManagedFields(sent("a")));
    expect(again.metadata.managedFields).toBe(cached.metadata.managedFields);
    // The rest of the object is still pooled: both copies hold one string.
    expect(pool.has("ns")).toBe(true);
  });
});
