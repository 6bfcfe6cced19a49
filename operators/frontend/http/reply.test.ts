import { describe, expect, it } from "vitest";
import { CloudError, CODES } from "../errors.ts";
import { errorReply, writeReply } from "./reply.ts";

interface Written {
  status?: number;
  headers?: Record<string, string>;
  payload?: string;
}

/** A reply recorder standing in for Node's ServerResponse. */
function recorder(): { written: Written; res: Parameters<typeof writeReply>[0] } {
  const written: Written = {};
  const res = {
    writeHead: (status: number, headers: Record<string, string>) => {
      written.status = status;
      written.headers = headers;
    },
    end: (payload?: string) => {
      written.payload = payload;
    },
  } as unknown as Parameters<typeof writeReply>[0];
  return { written, res };
}

describe("replies", () => {
  it("answers a CloudError as it says, with X-Ms-Error-Code", () => {
    const reply = errorReply(new CloudError(409, { code: CODES.Conflict, message: "busy" }));
    expect(reply).toEqual({
      status: 409,
      body: { error: { code: "Conflict", message: "busy" } },
      headers: { "x-ms-error-code": "Conflict" },
    });
  });

  it("answers anything else as a 500 that does not repeat what was thrown", () => {
    const reply = errorReply(new Error("secret detail"));
    expect(reply.status).toBe(500);
    expect(JSON.stringify(reply.body)).not.toContain("secret detail");
  });

  it("writes JSON and text with their content types and the request's headers", () => {
    const json = recorder();
    writeReply(json.res, { status: 200, body: { a: 1 } }, { "x-ms-request-id": "r1" });
    expect(json.written).toEqual({
      status: 200,
      headers: { "x-ms-request-id": "r1", "content-type": "application/json" },
      payload: '{"a":1}',
    });
    const text = recorder();
    writeReply(text.res, { status: 200, body: "ok" }, {});
    expect(text.written.headers?.["content-type"]).toBe("text/plain");
    const empty = recorder();
    writeReply(empty.res, { status: 204 }, {});
    expect(empty.written.payload).toBeUndefined();
  });
});
