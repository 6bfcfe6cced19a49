/**
 * The ARM emulator as a process of its own, for benchmarks that measure each component apart:
 * prints one JSON line with what a client needs (endpoint, CA, principal), then serves until
 * SIGTERM.
 *
 *   node hack/harness/arm-emulator/main.ts --work-dir <dir> [--async-delay-ms 0]
 */
import { parseArgs } from "node:util";
import { startArmEmulator } from "./index.ts";

const { values } = parseArgs({
  options: { "work-dir": { type: "string" }, "async-delay-ms": { type: "string", default: "0" } },
});
if (!values["work-dir"]) throw new Error("--work-dir is required");
const arm = await startArmEmulator({
  workDir: values["work-dir"],
  asyncDelayMs: Number(values["async-delay-ms"]),
});
const { endpoint, caPath, tenantId, clientId, clientSecret } = arm;
process.stdout.write(`${JSON.stringify({ endpoint, caPath, tenantId, clientId, clientSecret })}\n`);
process.on("SIGTERM", () => void arm.stop().then(() => process.exit(0)));
