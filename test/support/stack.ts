/** The whole region's software (hack/harness/stack.ts) on the test region, with an ARM emulator and a storage emulator of its own. */
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { startStack, type Stack, type StackOptions } from "../../hack/harness/stack.ts";
import { scratchDir } from "./fixtures.ts";
import { brokerCredentials, clusterInfo, region } from "./region.ts";

export interface TestStack {
  arm: ArmEmulator;
  storage: StorageEmulator;
  stack: Stack;
  stop(): Promise<void>;
}

/** Starts the emulators and the stack against the service cluster and both management clusters. */
export async function startTestStack(
  name: string,
  opts: Omit<StackOptions, "serviceKubeconfig" | "management" | "broker" | "arm" | "storage"> = {},
): Promise<TestStack> {
  const scratch = await scratchDir(name);
  const arm = await startArmEmulator({ workDir: scratch.path, asyncDelayMs: 100 });
  const storage = await startStorageEmulator({ workDir: scratch.path, verifyBearer: arm.verifyBearer });
  const stack = await startStack({
    serviceKubeconfig: clusterInfo("service").kubeconfigPath,
    management: ["mgmt-1", "mgmt-2"].map((m) => ({ name: m, kubeconfigPath: clusterInfo(m).kubeconfigPath })),
    broker: { url: region().broker.url, credentials: brokerCredentials },
    arm,
    storage,
    namespace: `hcp-${name}-${process.pid}`,
    ...opts,
  });
  return {
    arm,
    storage,
    stack,
    async stop() {
      await stack.stop();
      await arm.stop();
      await storage.stop();
      await scratch.remove();
    },
  };
}
