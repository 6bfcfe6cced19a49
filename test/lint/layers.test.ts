/**
 * The layer rules in eslint.config.js fail on a cross-layer import and pass the imports each
 * layer is allowed, so a loosened pattern or a typo in a regular expression shows here. Sources
 * are linted as text under a path they pretend to live at; only the import rules run.
 */
import { ESLint } from "eslint";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import tseslint from "typescript-eslint";
import { beforeAll, describe, expect, it } from "vitest";
import { LAYERS, layersOf, operatorFolders } from "../../hack/lint/layers.js";
import { cycles, importGraph, sourceFiles } from "./import-graph.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const IMPORT_RULES = new Set(["no-restricted-imports"]);

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({
    cwd: root,
    ignore: false,
    overrideConfig: [tseslint.configs.disableTypeChecked],
    ruleFilter: ({ ruleId }) => IMPORT_RULES.has(ruleId),
  });
});

async function importErrors(filePath: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from "${specifier}";\nexport const y = x;\n`, {
    filePath,
  });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? "fatal"}: ${m.message}`);
}

describe("layer rules", () => {
  it.each([
    ["operators/cluster/probe.ts", "../../hack/harness/certs.ts", "imports nothing from hack/ or test/"],
    ["operators/main.ts", "../test/support/fixtures.ts", "imports nothing from hack/ or test/"],
    ["operators/frontend/testing/probe.ts", "../../../hack/harness/certs.ts", "imports nothing from hack/"],
    ["operators/runtime/probe.test.ts", "../../hack/harness/region.ts", "may import test/support/"],
    ["operators/runtime/probe.test.ts", "../../test/integration/x.ts", "may import test/support/"],
    ["operators/api/core.ts", "../runtime/kube.ts", "depends on nothing outside operators/api/"],
    [
      "operators/api/v1alpha1/probe.ts",
      "../../runtime/conditions.ts",
      "depends on nothing outside operators/api/",
    ],
    ["operators/api/v1alpha1/probe.ts", "node:util", "depends on nothing outside operators/api/"],
    [
      "operators/api/v1alpha1/probe.ts",
      "@kubernetes/client-node",
      "depends on nothing outside operators/api/",
    ],
    ["operators/maestro-server/probe.ts", "../cloudevents/transport/transport.ts", "never the transport"],
    ["operators/maestro-agent/probe.ts", "../cloudevents/transport/mqtt.ts", "never the transport"],
    ["operators/maestro-server/probe.ts", "../cloudevents/internal.ts", "never the transport"],
    ["operators/maestro-server/probe.test.ts", "../cloudevents/transport/mqtt.ts", "never the transport"],
    ["operators/hcp/probe.ts", "../cloudevents/transport/mqtt.ts", "never the transport"],
    ["operators/nodepool/probe.ts", "../cluster/status.ts", "are siblings"],
    ["operators/cluster/probe.ts", "../nodepool/status.ts", "are siblings"],
    ["operators/cluster/probe.test.ts", "../nodepool/status.ts", "are siblings"],
    [
      "operators/hcpctl/probe.ts",
      "../../test/support/hcpctl-objects.ts",
      "imports nothing from hack/ or test/",
    ],
    ["operators/hcpctl/probe.ts", "../cloudevents/client/source.ts", "never reaches the broker"],
    ["operators/hcpctl/commands/probe.ts", "../../cloudevents/types.ts", "never reaches the broker"],
    ["operators/hcpctl/probe.ts", "../cluster/scope.ts", "hcpctl imports only api/, runtime/, releases/"],
    ["operators/hcpctl/probe.ts", "../frontend/names.ts", "hcpctl imports only api/, runtime/, releases/"],
    ["operators/hcpctl/probe.ts", "../hcp/staleness.ts", "hcpctl imports only api/, runtime/, releases/"],
    ["operators/hcpctl/commands/probe.ts", "../../nodepool/scope.ts", "hcpctl imports only"],
    ["operators/hcpctl/probe.test.ts", "../breakglass/work.ts", "hcpctl imports only"],
    ["operators/breakglass/probe.ts", "../cloudevents/transport/mqtt.ts", "never the transport"],
    ["operators/externalauth/probe.ts", "../cloudevents/transport/mqtt.ts", "never the transport"],
    ["operators/runtime/probe.ts", "../cluster/status.ts", "imports no controller and no CLI"],
    ["operators/hcp/probe.ts", "../frontend/names.ts", "imports no controller and no CLI"],
    ["operators/releases/probe.ts", "../hcpctl/io.ts", "imports no controller and no CLI"],
    ["operators/cloudevents/client/probe.ts", "../../maestro-server/status.ts", "imports no controller"],
  ])("%s may not import %s", async (filePath, specifier, message) => {
    const errors = await importErrors(filePath, specifier);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("no-restricted-imports");
    expect(errors[0]).toContain(message);
  });

  it.each([
    ["operators/runtime/probe.test.ts", "../../test/support/fixtures.ts"],
    ["operators/api/v1alpha1/probe.ts", "../meta/v1.ts"],
    ["operators/api/v1alpha1/probe.ts", "./meta.ts"],
    ["operators/api/core.ts", "./meta/v1.ts"],
    ["operators/cluster/probe.ts", "../api/v1alpha1/nodepool.ts"],
    ["operators/cluster/probe.ts", "../hcp/requests.ts"],
    ["operators/nodepool/probe.ts", "../hcp/requests.ts"],
    ["operators/maestro-server/probe.ts", "../cloudevents/client/source.ts"],
    ["operators/maestro-server/probe.ts", "../cloudevents/codec/statushash.ts"],
    ["operators/maestro-server/probe.ts", "../cloudevents/store/status.ts"],
    ["operators/maestro-agent/probe.ts", "../cloudevents/types.ts"],
    ["operators/cloudevents/client/probe.ts", "../transport/transport.ts"],
    ["operators/main.ts", "./cluster/controller.ts"],
    ["operators/hcpctl/probe.ts", "../runtime/kube.ts"],
    ["operators/hcpctl/probe.ts", "../api/v1alpha1/feedback.ts"],
    ["operators/hcpctl/probe.ts", "../releases/plan.ts"],
    ["operators/hcpctl/commands/probe.ts", "../tree.ts"],
    ["operators/hcpctl/commands/probe.ts", "../../api/v1alpha1/index.ts"],
    ["operators/hcpctl/probe.test.ts", "../../test/support/hcpctl-objects.ts"],
    ["hack/harness/probe.ts", "../../operators/runtime/kube.ts"],
    ["test/integration/probe.test.ts", "../../hack/hypershift-simulator/controller.ts"],
  ])("%s may import %s", async (filePath, specifier) => {
    expect(await importErrors(filePath, specifier)).toEqual([]);
  });
});

describe("every folder has a layer", () => {
  it("a folder the table does not know fails the config, named", () => {
    expect(() => layersOf(["cluster", "billing", "runtime", "sre-portal"])).toThrow(
      "operators/billing, operators/sre-portal: no layer",
    );
  });

  it("every folder of the tree has one", () => {
    const folders = operatorFolders(root);
    expect(layersOf(folders).map(([f]) => f)).toEqual(folders);
    expect(Object.keys(LAYERS).sort()).toEqual([...folders].sort());
  });
});

describe("import cycles", () => {
  it("finds a deliberate cycle", () => {
    const fixture = join(root, "test/lint/fixtures/cycle");
    const found = cycles(importGraph(sourceFiles(fixture, new Set())), root);
    expect(found).toEqual([["test/lint/fixtures/cycle/first.ts", "test/lint/fixtures/cycle/second.ts"]]);
  });

  it("the repository has none", () => {
    const files = ["operators", "hack", "test"].flatMap((d) => sourceFiles(join(root, d)));
    expect(files.length).toBeGreaterThan(100);
    expect(cycles(importGraph(files), root)).toEqual([]);
  });
});
