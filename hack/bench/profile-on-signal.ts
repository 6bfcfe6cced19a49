/**
 * Preloaded into a benchmarked process by `--cpu-profile`
 * (`node --import <this file's URL>?dir=<dir>&seconds=<s>`): each SIGWINCH records a CPU profile of
 * the next `seconds` and writes it into `dir`, named by the process and the window's number. A
 * window, not node's `--cpu-prof`: a whole-run profile of the operators at 1,000 clusters held
 * every sampled stack until exit, slowed the process it measured, and grew to 10 GB while being
 * written. Development tool only; the product never installs it.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

const params = new URL(import.meta.url).searchParams;
const dir = params.get("dir");
const seconds = Number(params.get("seconds") ?? "60");
let windows = 0;
let recording = false;

async function record(): Promise<void> {
  if (!dir || recording) return;
  recording = true;
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000).unref());
    const { profile } = await session.post("Profiler.stop");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${process.pid}-${++windows}.cpuprofile`), JSON.stringify(profile));
  } finally {
    session.disconnect();
    recording = false;
  }
}

process.on("SIGWINCH", () => {
  record().catch((err: unknown) => process.stderr.write(`profile window failed: ${String(err)}\n`));
});
