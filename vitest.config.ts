import { defineConfig } from "vitest/config";

// Pure unit tests beside the code (and the lint rules' own, in test/lint, and the fuzz targets in
// test/fuzz); integration/e2e tests that share one local region (etcd +
// kube-apiservers) started once by the global setup; and the interop suite against the real
// Maestro, run on its own by `npm run test:interop` because the Maestro build is slow cold.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "operators/**/*.test.ts",
            "hack/**/*.test.ts",
            "test/lint/**/*.test.ts",
            "test/fuzz/**/*.test.ts",
          ],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts", "test/e2e/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Tests restart apiservers and spawn processes; the machine has two cores.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "interop",
          include: ["test/interop/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
