/**
 * `node hack/bench/profile-summary.ts FILE.cpuprofile [--top 25]`: where a V8 CPU profile's time
 * went, as self time by function and by source (a project file, or an npm package as a whole), so
 * a bench run's `--cpu-profile` output can be read without a browser.
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** A project file relative to the repository, a package by its name, or V8's own label. */
export function sourceOf(url: string): string {
  if (url === "") return "(native)";
  const path = url.replace(/^file:\/\//, "");
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1] as string;
  const repo = /\/(operators|hack|test)\/(.*)$/.exec(path);
  if (repo) return `${repo[1]}/${repo[2]}`;
  return path.startsWith("node:") ? path : `(node) ${path}`;
}

export interface Summary {
  totalMs: number;
  byFunction: Array<{ key: string; ms: number }>;
  bySource: Array<{ key: string; ms: number }>;
}

export function summarise(profile: CpuProfile): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const fn = new Map<string, number>();
  const src = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const name = frame.functionName || "(anonymous)";
    // V8's own entries ((idle), (garbage collector), (program)) and natives have no URL: keep their names.
    const source = frame.url ? sourceOf(frame.url) : name;
    const key = frame.url ? `${name} ${source}:${frame.lineNumber + 1}` : name;
    fn.set(key, (fn.get(key) ?? 0) + ms);
    src.set(source, (src.get(source) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) =>
    [...m].map(([key, ms]) => ({ key, ms })).sort((a, b) => b.ms - a.ms);
  return {
    totalMs: (profile.endTime - profile.startTime) / 1000,
    byFunction: sorted(fn),
    bySource: sorted(src),
  };
}

function table(title: string, rows: Array<{ key: string; ms: number }>, top: number, busyMs: number): string {
  const lines = rows.slice(0, top).map((r) => {
    const share = ((100 * r.ms) / busyMs).toFixed(1).padStart(5);
    return `${(r.ms / 1000).toFixed(1).padStart(8)} s ${share}%  ${r.key}`;
  });
  return [title, ...lines].join("\n");
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "25" } },
  });
  const top = Number(values.top);
  for (const file of positionals) {
    const s = summarise(JSON.parse(await readFile(file, "utf8")) as CpuProfile);
    const idle = s.byFunction.find((r) => r.key === "(idle)")?.ms ?? 0;
    const busy = s.byFunction.reduce((sum, r) => sum + r.ms, 0) - idle;
    const rows = (list: Summary["bySource"]) => list.filter((r) => r.key !== "(idle)");
    process.stdout.write(
      `${file}: ${(s.totalMs / 1000).toFixed(1)} s profiled, ${(busy / 1000).toFixed(1)} s busy\n` +
        `${table("by source (self time, share of busy)", rows(s.bySource), top, busy)}\n` +
        `${table("by function", rows(s.byFunction), top, busy)}\n\n`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
