import { defineConfig } from "vitest/config";

// Two projects: pure unit tests beside the code, and integration/e2e tests that share one local
// region (etcd + kube-apiservers) started once by the global setup.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["operators/**/*.test.ts", "hack/**/*.test.ts"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Tests restart apiservers and spawn processes; the machine has two cores.
          fileParallelism: false,
        },
      },
    ],
  },
});
