import { describe, expect, it } from "vitest";
import { OPERATION_TTL_MS, type OperationDoc } from "../../api/v1alpha1/index.ts";
import { KubeApiError, type KubeClient, type KubeObject } from "../../runtime/kube.ts";
import { collectExpired } from "./garbage-collection.ts";

const NOW = Date.parse("2026-03-01T00:00:00Z");

function configMap(name: string, startTime: string | undefined): KubeObject {
  const doc = startTime === undefined ? undefined : ({ id: name, startTime } as Partial<OperationDoc>);
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "sub-ns" },
    data: doc ? { "operation.json": JSON.stringify(doc) } : {},
  };
}

/** A client holding operation ConfigMaps; `gone` are deleted by someone else first (404). */
function fakeClient(items: KubeObject[], gone: string[] = []) {
  const deleted: string[] = [];
  const client = {
    listAll: () => Promise.resolve({ items, metadata: {} }),
    delete: (_type: unknown, ref: { name: string }) => {
      if (gone.includes(ref.name)) return Promise.reject(new KubeApiError(404, "NotFound", "gone", {}));
      deleted.push(ref.name);
      return Promise.resolve();
    },
  } as unknown as KubeClient;
  return { client, deleted };
}

describe("operation garbage collection", () => {
  const old = new Date(NOW - OPERATION_TTL_MS - 1000).toISOString();
  const recent = new Date(NOW - 1000).toISOString();

  it("removes the documents past the TTL and keeps the rest, and what does not read", async () => {
    const { client, deleted } = fakeClient([
      configMap("op-old", old),
      configMap("op-new", recent),
      configMap("op-x", undefined),
    ]);
    expect(await collectExpired(client, NOW)).toBe(1);
    expect(deleted).toEqual(["op-old"]);
  });

  it("takes one another replica removed first as no error", async () => {
    const { client } = fakeClient([configMap("op-a", old), configMap("op-b", old)], ["op-a"]);
    expect(await collectExpired(client, NOW)).toBe(1);
  });
});
