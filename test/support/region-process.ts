/** Starts a region in its own process and prints its work dir and child pids, then waits to be killed. */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { startRegion } from "../../hack/harness/region.ts";

const region = await startRegion({ managementClusters: 0 });
const pids: number[] = [];
for (const f of await readdir(region.workDir)) {
  if (f.endsWith(".pid") && f !== "owner.pid")
    pids.push(Number((await readFile(join(region.workDir, f), "utf8")).trim()));
}
process.stdout.write(JSON.stringify({ workDir: region.workDir, pids }) + "\n");
setInterval(() => undefined, 1 << 30);
