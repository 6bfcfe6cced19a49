/**
 * `npm run fuzz [-- --seconds N] [--target NAME] [--http]`: the fuzz targets of test/fuzz for longer
 * than CI gives them (default 300 s each instead of at most 6 s), saving every counterexample
 * fast-check shrinks to into test/fuzz/corpus/<target>/found-<digest>.json. A plain `npm test`
 * replays the corpus first, so a saved input fails there until the defect is fixed; commit it
 * with the fix. `--http` also runs the frontend's HTTP fuzz test against a local region
 * (test/integration/frontend-fuzz.test.ts), whose failures are printed, not saved.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "300" },
    target: { type: "string" },
    http: { type: "boolean", default: false },
  },
});

const root = join(import.meta.dirname, "..");
const vitest = join(root, "node_modules", ".bin", "vitest");

function run(args: string[]): Promise<number> {
  const env = { ...process.env, FUZZ_SECONDS: values.seconds, FUZZ_SAVE: "1" };
  const child = spawn(vitest, ["run", ...args], { cwd: root, env, stdio: "inherit" });
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

const filter = values.target ? ["-t", `fuzz ${values.target} `] : [];
let code = await run(["--project", "unit", "test/fuzz/", ...filter]);
if (values.http) code ||= await run(["--project", "integration", "test/integration/frontend-fuzz.test.ts"]);
process.exit(code);
