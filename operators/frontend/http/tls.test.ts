import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frontendCerts, type FrontendCerts } from "../../../test/support/frontend.ts";
import { silentLogger } from "../../runtime/logger.ts";
import { createTlsServer, DEFAULT_CONNECTION_LIMITS } from "./tls.ts";
import type { Server } from "node:https";

describe("TLS server", () => {
  let dir: string;
  let certs: FrontendCerts;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "frontend-tls-"));
    certs = await frontendCerts(dir);
    server = createTlsServer(
      {
        cert: await readFile(certs.serving.certPath),
        key: await readFile(certs.serving.keyPath),
        clientCA: await readFile(certs.clientCA),
      },
      DEFAULT_CONNECTION_LIMITS,
      silentLogger,
      // Answers whether the client's certificate was signed by the client CA: authentication.ts's verdict.
      (req, res) => res.end(String((req.socket as TLSSocket).authorized)),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  }, 60_000);

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  async function get(client?: { certPath: string; keyPath: string }): Promise<string> {
    const ca = await readFile(certs.servingCA);
    const tls = client ? { cert: await readFile(client.certPath), key: await readFile(client.keyPath) } : {};
    return new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/", ca, ...tls, agent: false }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve(body));
      });
      req.on("error", reject);
      req.end();
    });
  }

  it("serves with the serving certificate and lets a request through whatever its client certificate", async () => {
    expect(await get(certs.arm)).toBe("true");
    expect(await get(certs.stranger)).toBe("false");
    expect(await get()).toBe("false");
  });

  it("applies the connection limits", () => {
    expect(server.maxConnections).toBe(DEFAULT_CONNECTION_LIMITS.maxConnections);
    expect(server.headersTimeout).toBe(DEFAULT_CONNECTION_LIMITS.headersTimeoutMs);
    expect(server.requestTimeout).toBe(DEFAULT_CONNECTION_LIMITS.requestTimeoutMs);
    expect(server.keepAliveTimeout).toBe(DEFAULT_CONNECTION_LIMITS.idleTimeoutMs);
  });
});
