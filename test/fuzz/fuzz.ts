/**
 * The fuzz targets' runner: each target replays its corpus (test/fuzz/corpus/<target>/*.json: valid
 * samples and every input that ever found a bug), then runs fast-check on generated inputs for a
 * bounded number of runs and time. In CI each target is held to its `runs` and at most
 * `FUZZ_SECONDS` (default 6 s); `npm run fuzz` runs longer (`hack/fuzz.ts`) and saves every
 * counterexample it shrinks to into the corpus, where the next plain test run replays it.
 *
 * Environment: FUZZ_RUNS (runs per target, overrides the target's), FUZZ_SECONDS (time per target),
 * FUZZ_SEED (replay one generated run: the seed a failure printed), FUZZ_SAVE=1 (write failures to
 * the corpus).
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import fc from "fast-check";
import { describe, it } from "vitest";

export const CORPUS_DIR = join(import.meta.dirname, "corpus");

export interface FuzzTarget<T> {
  /** The corpus folder, and the test's name. */
  name: string;
  /** Generated inputs; they must survive JSON (the corpus is JSON). */
  arbitrary: fc.Arbitrary<T>;
  /** Throws or rejects when the input shows a defect; says which. */
  property: (input: T) => void | Promise<void>;
  /** Generated runs in CI; FUZZ_RUNS overrides. */
  runs: number;
  /** The longest one input may take (default 2000 ms): more is a defect (unbounded work, a hang). */
  maxMsPerInput?: number;
}

/** The property, timed: an input that takes longer than the target allows fails. */
async function timed<T>(target: FuzzTarget<T>, input: T): Promise<void> {
  const started = performance.now();
  await target.property(input);
  const ms = performance.now() - started;
  const limit = target.maxMsPerInput ?? 2000;
  if (ms > limit) throw new Error(`one input took ${Math.round(ms)} ms, more than ${limit} ms`);
}

interface Settings {
  runs: number | undefined;
  seconds: number;
  seed: number | undefined;
  save: boolean;
}

function envNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${raw} is not a positive number`);
  return n;
}

function settings(): Settings {
  return {
    runs: envNumber("FUZZ_RUNS"),
    seconds: envNumber("FUZZ_SECONDS") ?? 6,
    seed: envNumber("FUZZ_SEED"),
    save: process.env["FUZZ_SAVE"] === "1",
  };
}

export interface CorpusEntry {
  file: string;
  input: unknown;
}

/** The target's corpus, in file name order. */
export function corpus(name: string): CorpusEntry[] {
  const dir = join(CORPUS_DIR, name);
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  } catch {
    return [];
  }
  return files.sort().map((file) => ({ file, input: JSON.parse(readFileSync(join(dir, file), "utf8")) }));
}

/** Writes a failing input into the target's corpus under a name derived from its content. */
export function saveToCorpus(name: string, input: unknown): string {
  const text = `${JSON.stringify(input, null, 1)}\n`;
  const digest = createHash("sha256").update(text).digest("hex").slice(0, 12);
  const dir = join(CORPUS_DIR, name);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `found-${digest}.json`);
  writeFileSync(path, text);
  return relative(process.cwd(), path);
}

async function generated<T>(target: FuzzTarget<T>, s: Settings): Promise<void> {
  const property = fc.asyncProperty(target.arbitrary, (input) => timed(target, input));
  const details = await fc.check(property, {
    numRuns: s.runs ?? (process.env["FUZZ_SECONDS"] ? Number.MAX_SAFE_INTEGER : target.runs),
    interruptAfterTimeLimit: s.seconds * 1000,
    ...(s.seed === undefined ? {} : { seed: s.seed }),
  });
  // A long run says how far it got; CI's stay quiet.
  if (process.env["FUZZ_SECONDS"]) console.log(`fuzz ${target.name}: ${details.numRuns} generated inputs`);
  if (!details.failed) return;
  const saved = s.save && details.counterexample ? saveToCorpus(target.name, details.counterexample[0]) : "";
  const cause: unknown = details.errorInstance;
  const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const report = fc.defaultReportMessage(details) ?? "failed";
  throw new Error(`${why}\n${report}${saved ? `\nSaved to ${saved}` : ""}`, { cause });
}

/** Declares the target's tests: one per corpus file, then the generated runs. */
export function fuzzTarget<T>(target: FuzzTarget<T>): void {
  const s = settings();
  describe(`fuzz ${target.name}`, () => {
    const entries = corpus(target.name);
    if (entries.length > 0)
      it.each(entries)("corpus $file", async ({ input }) => {
        // A corpus file holds an input of this target as JSON.
        await timed(target, input as T);
      });
    it("generated inputs", () => generated(target, s), (s.seconds + 20) * 1000);
  });
}
