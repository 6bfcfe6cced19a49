import { describe, expect, it } from "vitest";
import { checkCarriedHeaders } from "./carried-headers.ts";
import { requestIds } from "./request-ids.ts";

const idsOf = (headers: Record<string, string>) =>
  requestIds(headers, checkCarriedHeaders(headers), () => "11111111-2222-3333-4444-555555555555");

describe("request IDs", () => {
  it("gives every request a new ID and echoes the correlation ID", () => {
    const ids = idsOf({ "x-ms-correlation-request-id": "corr-1" });
    expect(ids.requestId).toBe("11111111-2222-3333-4444-555555555555");
    expect(ids.replyHeaders).toEqual({
      "x-ms-request-id": "11111111-2222-3333-4444-555555555555",
      "x-ms-correlation-request-id": "corr-1",
    });
  });

  it("echoes the client request ID only when asked to", () => {
    expect(idsOf({ "x-ms-client-request-id": "c-1" }).replyHeaders["x-ms-client-request-id"]).toBeUndefined();
    const asked = idsOf({ "x-ms-client-request-id": "c-1", "x-ms-return-client-request-id": "True" });
    expect(asked.clientRequestId).toBe("c-1");
    expect(asked.replyHeaders["x-ms-client-request-id"]).toBe("c-1");
  });

  it("neither echoes nor keeps an ID that failed its check", () => {
    const ids = idsOf({ "x-ms-correlation-request-id": "bad\u0001id" });
    expect(ids.correlationRequestId).toBeUndefined();
    expect(ids.replyHeaders["x-ms-correlation-request-id"]).toBeUndefined();
  });
});
