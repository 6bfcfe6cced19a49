import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

/**
 * The update graph's ValidatingAdmissionPolicy stopped refusing on the shared service apiserver
 * once a test stack before it had installed and removed the region's admission policies (found
 * late in a session; custom policies made the same way were not affected, cause not yet known).
 * Until that is understood, the test that proves the policy runs first, on a fresh apiserver.
 */
const FIRST = ["test/e2e/upgrades.test.ts"];

class AdmissionFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (f: TestSpecification): boolean => FIRST.some((name) => f.moduleId.endsWith(name));
    return [...sorted.filter(first), ...sorted.filter((f) => !first(f))];
  }
}

// Pure unit tests beside the code (and the lint rules' own, in test/lint, and the fuzz targets in
// test/fuzz); integration/e2e tests that share one local region (etcd +
// kube-apiservers) started once by the global setup; and the interop suite against the real
// Maestro, run on its own by `npm run test:interop` because the Maestro build is slow cold.
export default defineConfig({
  test: {
    sequence: { sequencer: AdmissionFirstSequencer },
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
