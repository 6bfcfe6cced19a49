/**
 * Stands in for ARM's Azure-AsyncNotificationUri endpoint: an https server (real TLS, a CA of its
 * own) that records every POST by path, and can be told to refuse the first N of a path.
 */
import { readFile } from "node:fs/promises";
import { listenHttps } from "../../hack/harness/https-server.ts";

export interface ReceivedNotification {
  path: string;
  body: unknown;
  /** What the receiver answered. */
  status: number;
  /** When it arrived (ms since the epoch). */
  at: number;
}

export interface NotificationReceiver {
  /** `https://127.0.0.1:<port>` */
  endpoint: string;
  /** The PEM the notifier is to trust. */
  ca: string;
  /** A URI on this receiver, unique per test. */
  uri(path: string): string;
  /** Every POST to `path`, refused ones included, in order. */
  received(path: string): ReceivedNotification[];
  /** Answers the next `n` POSTs to `path` (0: all of them) with 503. */
  refuse(path: string, n: number): void;
  close(): Promise<void>;
}

export async function startNotificationReceiver(workDir: string): Promise<NotificationReceiver> {
  const { server, endpoint, caPath } = await listenHttps(workDir, "notification-receiver");
  const received: ReceivedNotification[] = [];
  const refusals = new Map<string, number>();
  server.on("request", (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "";
      const left = refusals.get(path);
      const refuse = left !== undefined && left !== -1 ? left > 0 : left === -1;
      if (left !== undefined && left > 0) refusals.set(path, left - 1);
      const status = req.method === "POST" && !refuse ? 200 : 503;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = Buffer.concat(chunks).toString("utf8");
      }
      received.push({ path, body, status, at: Date.now() });
      res.writeHead(status).end();
    });
  });
  return {
    endpoint,
    ca: await readFile(caPath, "utf8"),
    uri: (path) => `${endpoint}${path}`,
    received: (path) => received.filter((r) => r.path === path),
    refuse: (path, n) => refusals.set(path, n === 0 ? -1 : n),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
