/**
 * The process around the command line: real streams, colour for stdout, Ctrl-C as an abort, the
 * exit code. The bins (hcpctl.ts, kubectl-hcp.ts) differ only in the name usage messages give.
 */
import { run } from "./cli.ts";
import { painterFor } from "./paint.ts";

export async function main(name: string): Promise<never> {
  const interrupt = new AbortController();
  process.once("SIGINT", () => interrupt.abort());
  process.once("SIGTERM", () => interrupt.abort());
  const code = await run(
    process.argv.slice(2),
    {
      stdout: process.stdout,
      stderr: process.stderr,
      paint: painterFor(process.stdout),
      now: Date.now,
      signal: interrupt.signal,
    },
    name,
  );
  // Idle keep-alive connections would hold the process open for seconds: flush and leave.
  await new Promise((resolve) => process.stdout.write("", resolve));
  process.exit(code);
}
