/** The schema walks a body goes through: read, required and defaults, create-only fields, merge patch. */
import { describe, expect, it } from "vitest";
import { clusterBody } from "../../../test/support/frontend.ts";
import type { FieldError } from "../errors.ts";
import type { JsonObject } from "./json.ts";
import { SCHEMAS } from "./registry.ts";
import { applyDefaults, checkRequired, keepCreateOnly, mergePatch, readValue } from "./schema-walks.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
const schema = SCHEMAS["2026-06-30-preview"].cluster;

describe("schema", () => {
  it("reads a body: wrong types, enums and ranges are field errors; read-only and unknown fields go", () => {
    const errors: FieldError[] = [];
    const body = clusterBody(SUB) as JsonObject;
    const p = body["properties"] as JsonObject;
    p["provisioningState"] = "Succeeded";
    p["unknown"] = 1;
    p["nodeDrainTimeoutMinutes"] = 99999;
    (p["api"] as JsonObject)["visibility"] = "Sideways";
    const out = readValue(schema, body, "", errors) as JsonObject;
    expect(errors.map((e) => e.target).sort()).toEqual([
      "properties.api.visibility",
      "properties.nodeDrainTimeoutMinutes",
    ]);
    expect((out["properties"] as JsonObject)["provisioningState"]).toBeUndefined();
    expect((out["properties"] as JsonObject)["unknown"]).toBeUndefined();
  });

  it("checks required fields and applies defaults", () => {
    const errors: FieldError[] = [];
    const doc = applyDefaults(schema, { location: "eastus", properties: { platform: {} } }) as JsonObject;
    checkRequired(schema, doc, "", errors);
    expect(errors.map((e) => e.target)).toContain("properties.version");
    expect(errors.map((e) => e.target)).toContain("properties.platform.subnetId");
    expect(doc["properties"]).toMatchObject({
      ingress: { type: "Public" },
      clusterImageRegistry: { state: "Enabled" },
    });
  });

  it("keeps create-only fields on update and refuses changing them", () => {
    const errors: FieldError[] = [];
    const old = {
      location: "eastus",
      properties: { dns: { baseDomainPrefix: "a" }, nodeDrainTimeoutMinutes: 1 },
    };
    const kept = keepCreateOnly(schema, old, { properties: { nodeDrainTimeoutMinutes: 2 } }, errors);
    expect(kept).toEqual({
      location: "eastus",
      properties: { dns: { baseDomainPrefix: "a" }, nodeDrainTimeoutMinutes: 2 },
    });
    keepCreateOnly(
      schema,
      old,
      { location: "westus", properties: { dns: { baseDomainPrefix: "b" } } },
      errors,
    );
    expect(errors.map((e) => e.target)).toEqual(["location", "properties.dns.baseDomainPrefix"]);
  });

  it("merges patches as RFC 7386", () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null, e: 3 }, d: [2] })).toEqual({
      a: { c: 2, e: 3 },
      d: [2],
    });
  });
});

describe("hostile bodies", () => {
  it("checks CIDRs, tag names and values, and the location of a body", () => {
    const errors: FieldError[] = [];
    const body = clusterBody(SUB) as JsonObject;
    (body["properties"] as JsonObject)["api"] = {
      authorizedCidrs: ["10.0.0.0/8", "1.2.3.4", "::1/128", "x", "1.2.3.4/40"],
    };
    body["tags"] = { ["k".repeat(600)]: "v", "a?b": "v", ok: "v".repeat(300) };
    body["location"] = " ";
    readValue(schema, body, "", errors);
    expect(errors.map((e) => e.target)).toEqual([
      "location",
      "tags",
      "tags",
      "tags.ok",
      "properties.api.authorizedCidrs[3]",
      "properties.api.authorizedCidrs[4]",
    ]);
    for (const e of errors) expect(e.message.length).toBeLessThan(300);
  });
});
