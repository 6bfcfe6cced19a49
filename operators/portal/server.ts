/**
 * The portal's HTTPS server as a Runnable: Hono's app on @hono/node-server over node:https,
 * closed when the manager's signal aborts. Runs on every replica (it writes nothing by itself).
 */
import { createServer } from "node:https";
import { serve, type ServerType } from "@hono/node-server";
import type { Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";

export interface PortalServerOptions {
  /** The app's fetch handler (Hono's app.fetch). */
  fetch: (request: Request) => Response | Promise<Response>;
  host: string;
  port: number;
  tls: { cert: Buffer; key: Buffer };
  log: Logger;
}

export class PortalServer implements Runnable {
  readonly needLeaderElection = false;
  readonly #opts: PortalServerOptions;

  constructor(opts: PortalServerOptions) {
    this.#opts = opts;
  }

  async start(signal: AbortSignal): Promise<void> {
    const { fetch, host, port, tls, log } = this.#opts;
    const server: ServerType = await new Promise((resolve) => {
      const s = serve({ fetch, hostname: host, port, createServer, serverOptions: tls }, (info) => {
        log.info("portal listening", { address: `${info.address}:${info.port}` });
        resolve(s);
      });
    });
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
