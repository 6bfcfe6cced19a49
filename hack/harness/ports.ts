import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago (the usual envtest approach). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns true or the deadline passes; the last error explains a timeout. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; intervalMs?: number; exited?: Promise<unknown> },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  let gone = false;
  void opts.exited?.then(() => (gone = true));
  while (Date.now() < deadline) {
    if (gone) throw new Error(`${what}: the process exited before it was ready`);
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
  const detail = lastError instanceof Error ? `: ${lastError.message}` : "";
  throw new Error(`${what}: not ready after ${opts.timeoutMs} ms${detail}`);
}
