/** The request headers whose values travel onto resources, checked at the edge. */
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../api/json.ts";
import { CloudError, CODES } from "../errors.ts";
import { checkCarriedHeaders, readSystemData, SYSTEM_DATA_HEADER } from "./carried-headers.ts";

/** A header value as Node's parser hands it over: the bytes sent, read as Latin-1. */
const onTheWire = (text: string): string => Buffer.from(text, "utf8").toString("latin1");

const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
  return v;
};

describe("headers that travel onto resources", () => {
  it.each(["x-ms-client-request-id", "x-ms-correlation-request-id", "x-ms-client-object-id"])(
    "refuses a non-ASCII %s, naming it, and keeps it out of what is carried",
    (name) => {
      const { headers, refusal } = checkCarriedHeaders({ [name]: onTheWire("☃"), host: "x" });
      expect(refusal?.status).toBe(400);
      expect(refusal?.body).toMatchObject({ code: CODES.InvalidParameter, target: name });
      expect(refusal?.body.message).toContain(`'${name}'`);
      expect(headers[name]).toBeUndefined();
      expect(headers.host).toBe("x");
    },
  );

  it("refuses control characters and overlong IDs; carries GUIDs and printable IDs unchanged", () => {
    expect(checkCarriedHeaders({ "x-ms-client-request-id": "a\u0085b" }).refusal).toBeDefined();
    expect(checkCarriedHeaders({ "x-ms-client-request-id": "a".repeat(257) }).refusal).toBeDefined();
    const id = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
    const ok = checkCarriedHeaders({ "x-ms-client-request-id": id, "x-ms-correlation-request-id": "a b/c" });
    expect(ok.refusal).toBeUndefined();
    expect(ok.headers["x-ms-client-request-id"]).toBe(id);
  });

  it("reads a principal name as the UTF-8 it was sent as; refuses one that is not UTF-8 or has control characters", () => {
    const ok = checkCarriedHeaders({ "x-ms-client-principal-name": onTheWire("zoë@contoso.com") });
    expect(ok.refusal).toBeUndefined();
    expect(ok.headers["x-ms-client-principal-name"]).toBe("zoë@contoso.com");
    const latin1 = checkCarriedHeaders({ "x-ms-client-principal-name": "zo\u00eb" });
    expect(latin1.refusal?.body.target).toBe("x-ms-client-principal-name");
    const control = checkCarriedHeaders({ "x-ms-client-principal-name": onTheWire("a\u0085b") });
    expect(control.refusal?.body.target).toBe("x-ms-client-principal-name");
  });

  it("refuses system data that is not a JSON object or nests too deep, naming the header", () => {
    for (const raw of ["[1]", "not json", JSON.stringify(nested(MAX_JSON_DEPTH + 1))]) {
      const err = (() => {
        try {
          readSystemData({ [SYSTEM_DATA_HEADER]: raw });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(CloudError);
      expect((err as CloudError).body.target).toBe(SYSTEM_DATA_HEADER);
    }
    const data = readSystemData({ [SYSTEM_DATA_HEADER]: onTheWire('{"createdBy":"zoë"}') });
    expect(data?.["createdBy"]).toBe("zoë");
    expect(data?.["createdAt"]).toBeTypeOf("string");
  });
});
