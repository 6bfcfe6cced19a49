import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerClientError, clientErrorOf } from "./client-errors.ts";

/** Sends raw bytes to the server and reads what comes back until it closes. */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(raw));
    let answer = "";
    socket.on("data", (d: Buffer) => (answer += d.toString()));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

describe("requests Node's parser refuses", () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer({ maxHeaderSize: 1024 }, (_req, res) => res.end("routed"));
    server.on("clientError", answerClientError);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers a malformed request line with a 400 CloudError", async () => {
    const answer = await exchange(port, "get / HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(answer).toContain("X-Ms-Error-Code: BadRequest");
    expect(answer).toContain('"code":"BadRequest"');
  });

  it("answers headers that are too large with a 431 CloudError", async () => {
    const answer = await exchange(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(4096)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toContain('"code":"RequestHeaderFieldsTooLarge"');
  });

  it("names each refusal with the status Node would give", () => {
    expect(clientErrorOf({ name: "E", message: "", code: "ERR_HTTP_REQUEST_TIMEOUT" }).status).toBe(408);
    expect(clientErrorOf({ name: "E", message: "", code: "HPE_INVALID_METHOD" }).body.message).toContain(
      "HPE_INVALID_METHOD",
    );
  });
});
