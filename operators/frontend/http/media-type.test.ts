import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../api/json.ts";
import { CloudError } from "../errors.ts";
import { parseRequestBody } from "./media-type.ts";

function refusal(f: () => unknown): CloudError {
  try {
    f();
  } catch (e) {
    if (e instanceof CloudError) return e;
    throw e;
  }
  throw new Error("expected a CloudError");
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("media type", () => {
  it("parses the JSON body of a PUT, PATCH or POST, with or without parameters", () => {
    expect(parseRequestBody("PUT", "application/json", json({ a: 1 }))).toEqual({ a: 1 });
    expect(parseRequestBody("PATCH", "Application/JSON; charset=utf-8", json([1]))).toEqual([1]);
    expect(parseRequestBody("POST", " application/json ", json("x"))).toBe("x");
  });

  it("ignores the body of other methods, and reads an empty body as none", () => {
    expect(parseRequestBody("GET", "text/plain", Buffer.from("not json"))).toBeUndefined();
    expect(parseRequestBody("DELETE", undefined, json({ a: 1 }))).toBeUndefined();
    expect(parseRequestBody("PUT", undefined, Buffer.alloc(0))).toBeUndefined();
    expect(parseRequestBody("POST", "application/json", Buffer.alloc(0))).toBeUndefined();
  });

  it("refuses another media type, or none with a body, with a 415 naming it", () => {
    const err = refusal(() => parseRequestBody("PUT", "text/plain", Buffer.from("{}")));
    expect(err.status).toBe(415);
    expect(err.body.code).toBe("UnsupportedMediaType");
    expect(err.body.message).toContain("'text/plain'");
    expect(refusal(() => parseRequestBody("PATCH", undefined, json({}))).status).toBe(415);
    expect(refusal(() => parseRequestBody("PUT", "application/xml", Buffer.alloc(0))).status).toBe(415);
  });

  it("refuses JSON that does not parse with a 400", () => {
    const err = refusal(() => parseRequestBody("PUT", "application/json", Buffer.from("{")));
    expect(err.status).toBe(400);
    expect(err.body.code).toBe("InvalidRequestContent");
  });

  it("refuses JSON nested deeper than the limit, and takes it at the limit", () => {
    const nested = (depth: number) => Buffer.from("[".repeat(depth) + "]".repeat(depth));
    expect(parseRequestBody("PUT", "application/json", nested(MAX_JSON_DEPTH))).toBeDefined();
    const err = refusal(() => parseRequestBody("PUT", "application/json", nested(MAX_JSON_DEPTH + 1)));
    expect(err.status).toBe(400);
    expect(err.body.message).toContain(`more than ${MAX_JSON_DEPTH} levels deep`);
  });
});
