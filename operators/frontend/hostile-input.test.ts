/**
 * The frontend's defences against a hostile client, one class each, without a server: request
 * IDs on works, nesting, quoted values, keys that name Object.prototype's fields, numbers JSON
 * cannot carry exactly, identifiers in another casing. The headers that travel onto resources are
 * http/carried-headers.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { requestIdAnnotations } from "../hcp/requests.ts";
import { SCHEMAS } from "./api/registry.ts";
import { boundedDepth, MAX_JSON_DEPTH } from "./api/json.ts";
import { keepCreateOnly, mergePatch, readValue } from "./api/schema-walks.ts";
import { nodePoolToCR } from "./mapping/node-pool.ts";
import { CloudError, MAX_ERROR_MESSAGE, type FieldError } from "./errors.ts";
import { carryHidden } from "./api/conversion.ts";
import { checkBodyName } from "./api/request-body.ts";

/** A header value as Node's parser hands it over: the bytes sent, read as Latin-1. */
const onTheWire = (text: string): string => Buffer.from(text, "utf8").toString("latin1");

const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
  return v;
};

describe("request IDs that travel onto works", () => {
  it("copies only carriable request IDs onto a work: one written by hand cannot wedge its applies", () => {
    const annotations = {
      "hcp.aro.dev/client-request-id": onTheWire("☃"),
      "hcp.aro.dev/correlation-request-id": "c0ffee",
    };
    expect(requestIdAnnotations({ metadata: { annotations } })).toEqual({
      "hcp.aro.dev/correlation-request-id": "c0ffee",
    });
  });
});

describe("nesting", () => {
  it("measures depth without recursion, at any depth", () => {
    expect(boundedDepth(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(true);
    expect(boundedDepth(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(false);
    expect(boundedDepth(nested(200_000), MAX_JSON_DEPTH)).toBe(false);
    expect(boundedDepth("scalar", 0)).toBe(true);
  });
});

describe("what a refusal quotes", () => {
  it("cuts every message and target short, details included", () => {
    const huge = "x".repeat(1024 * 1024);
    const e = new CloudError(400, {
      code: "C",
      message: huge,
      target: huge,
      details: [{ code: "D", message: huge }],
    });
    expect(e.body.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE);
    expect(e.body.target?.length).toBeLessThanOrEqual(256);
    expect(e.body.details?.[0]?.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE);
  });

  it("quotes a prefix of a body's name, not the name", () => {
    try {
      checkBodyName({ name: "n".repeat(1024 * 1024) }, "demo");
      expect.unreachable();
    } catch (e) {
      expect((e as CloudError).body.message.length).toBeLessThan(200);
    }
  });
});

describe("values JSON or JavaScript would change", () => {
  const pool = SCHEMAS["2026-06-30-preview"].nodePool;
  const cluster = SCHEMAS["2026-06-30-preview"].cluster;

  it("refuses integers past 2^53-1 (1e308, 2^53+1), naming the field", () => {
    for (const replicas of [1e308, 2 ** 53, -(2 ** 53)]) {
      const errors: FieldError[] = [];
      readValue(pool, { properties: { replicas } }, "", errors);
      expect(errors).toEqual([
        expect.objectContaining({
          target: "properties.replicas",
          message: expect.stringContaining("at most"),
        }),
      ]);
    }
    // 9007199254740993 in the request's text reads as 2^53: refused, not stored as another number.
    const errors: FieldError[] = [];
    readValue(pool, JSON.parse('{"properties":{"replicas":9007199254740993}}'), "", errors);
    expect(errors.map((e) => e.target)).toEqual(["properties.replicas"]);
  });

  it("takes a null tag in a PATCH as its removal (RFC 7386), not as a wrong type", () => {
    const errors: FieldError[] = [];
    const patch = { tags: { gone: null, kept: "v" } };
    readValue(cluster, patch, "", errors);
    expect(errors).toEqual([]);
    const merged = readValue(cluster, mergePatch({ tags: { gone: "x", other: "y" } }, patch), "", errors);
    expect(merged?.tags).toEqual({ other: "y", kept: "v" });
  });

  it("takes label keys that name Object.prototype's fields as keys, not duplicates", () => {
    const labels = ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"].map((key) => ({
      key,
      value: "v",
    }));
    const cr = nodePoolToCR(
      {
        id: "/x",
        name: "np",
        type: "t",
        location: "eastus",
        properties: { labels, platform: { vmSize: "Standard_D8s_v3" } },
      },
      {
        id: { kind: "nodePool", subscriptionId: "s", resourceGroup: "rg", cluster: "c", nodePool: "np" },
        namespace: "ns",
        name: "np",
        annotations: {},
        clusterName: "c",
      },
    );
    expect(Object.keys(cr.spec.labels ?? {}).sort()).toEqual(labels.map((l) => l.key).sort());
    expect(Object.getPrototypeOf(cr.spec.labels)).toBe(Object.prototype);
  });

  it("keeps what a version cannot see under keys such as 'constructor' and '__proto__'", () => {
    const old = JSON.parse('{"a":{"constructor":1,"__proto__":{"polluted":true}}}') as Record<string, never>;
    const out = carryHidden(old, {}, {}) as Record<string, Record<string, unknown>>;
    expect(Object.hasOwn(out["a"] ?? {}, "constructor")).toBe(true);
    expect(Object.hasOwn(out["a"] ?? {}, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect((out["a"] as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
});

describe("ARM identifiers", () => {
  it("takes a create-only resource ID in another casing as no change, keeping the stored casing", () => {
    const cluster = SCHEMAS["2026-06-30-preview"].cluster;
    const subnet =
      "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/n";
    const old = { properties: { platform: { subnetId: subnet, managedResourceGroup: "Managed" } } };
    const errors: FieldError[] = [];
    const next = {
      properties: { platform: { subnetId: subnet.toUpperCase(), managedResourceGroup: "MANAGED" } },
    };
    const kept = keepCreateOnly(cluster, old, next, errors);
    expect(errors).toEqual([]);
    expect(kept?.properties?.platform?.subnetId).toBe(subnet);
    keepCreateOnly(cluster, old, { properties: { platform: { subnetId: `${subnet}2` } } }, errors);
    expect(errors.map((e) => e.target)).toEqual(["properties.platform.subnetId"]);
  });
});
