/**
 * The ARM emulator as a process of its own, for benchmarks that measure each component apart,
 * with the storage emulator beside it (its tokens come from this Entra ID): prints one JSON line
 * with what a client needs (endpoint, CA, principal, `storage`), then serves until SIGTERM.
 *
 *   node hack/harness/arm-emulator/main.ts --work-dir <dir> [--async-delay-ms 0] [--request-limits arm|off]
 *
 * `--request-limits off` drops ARM's token buckets (limits.ts), kept by default.
 */
import { parseArgs } from "node:util";
import { startStorageEmulator } from "../storage-emulator/index.ts";
import { startArmEmulator } from "./index.ts";

const { values } = parseArgs({
  options: {
    "work-dir": { type: "string" },
    "async-delay-ms": { type: "string", default: "0" },
    "request-limits": { type: "string", default: "arm" },
  },
});
if (!values["work-dir"]) throw new Error("--work-dir is required");
if (values["request-limits"] !== "arm" && values["request-limits"] !== "off")
  throw new Error(`--request-limits is arm or off, not ${values["request-limits"]}`);
const arm = await startArmEmulator({
  workDir: values["work-dir"],
  asyncDelayMs: Number(values["async-delay-ms"]),
  ...(values["request-limits"] === "off" ? { requestLimits: "off" as const } : {}),
});
const storage = await startStorageEmulator({ workDir: values["work-dir"], verifyBearer: arm.verifyBearer });
const { endpoint, caPath, tenantId, clientId, clientSecret } = arm;
const { blobServiceUrl, webEndpoint } = storage;
process.stdout.write(
  `${JSON.stringify({ endpoint, caPath, tenantId, clientId, clientSecret, storage: { blobServiceUrl, webEndpoint, caPath: storage.caPath } })}\n`,
);
process.on("SIGTERM", () => void Promise.all([arm.stop(), storage.stop()]).then(() => process.exit(0)));
