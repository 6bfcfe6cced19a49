/**
 * The ARM emulator as a process of its own, for benchmarks that measure each component apart,
 * with the storage emulator beside it (its tokens come from this Entra ID): prints one JSON line
 * with what a client needs (endpoint, CA, principal, `storage`), then serves until SIGTERM.
 *
 *   node hack/harness/arm-emulator/main.ts --work-dir <dir> [--async-delay-ms 0]
 */
import { parseArgs } from "node:util";
import { startStorageEmulator } from "../storage-emulator/index.ts";
import { startArmEmulator } from "./index.ts";

const { values } = parseArgs({
  options: { "work-dir": { type: "string" }, "async-delay-ms": { type: "string", default: "0" } },
});
if (!values["work-dir"]) throw new Error("--work-dir is required");
const arm = await startArmEmulator({
  workDir: values["work-dir"],
  asyncDelayMs: Number(values["async-delay-ms"]),
});
const storage = await startStorageEmulator({ workDir: values["work-dir"], verifyBearer: arm.verifyBearer });
const { endpoint, caPath, tenantId, clientId, clientSecret } = arm;
const { blobServiceUrl, webEndpoint } = storage;
process.stdout.write(
  `${JSON.stringify({ endpoint, caPath, tenantId, clientId, clientSecret, storage: { blobServiceUrl, webEndpoint, caPath: storage.caPath } })}\n`,
);
process.on("SIGTERM", () => void Promise.all([arm.stop(), storage.stop()]).then(() => process.exit(0)));
