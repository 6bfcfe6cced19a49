// Lint rules follow docs/style.md: small functions, explicit boundaries, no floating promises, and
// the layers of the tree (docs/architecture.md, "Layout and layers") enforced rather than described.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";
import { CLI_IMPORTS, LAYERS, layersOf, operatorFolders } from "./hack/lint/layers.js";

// Import specifiers are relative paths, so each rule is a regular expression over the specifier
// as written. No folder under operators/ is named hack or test, so any run of "../" that reaches
// one reaches the top-level folder.
const noDevTools = {
  regex: "^(\\.\\./)+(hack|test)(/|$)",
  message: "operators/ is the product: it imports nothing from hack/ or test/ (test doubles live there).",
};
const onlyTestSupport = {
  regex: "^(\\.\\./)+(hack(/|$)|test/(?!support/))",
  message: "A unit test under operators/ may import test/support/, nothing else outside operators/.",
};
/** Outside cloudevents/, only its client/, codec/, store/ and types.ts: never transport/ or what is not listed. */
const noTransport = {
  regex: "(^|/)cloudevents/(?!(client|codec|store)/|types\\.ts$)",
  message:
    "Only cloudevents/ sees MQTT: other folders use its client/, codec/, store/ and types.ts, never the transport.",
};
const noBroker = {
  regex: "(^|/)cloudevents(/|$)",
  message: "hcpctl reads the service cluster only: it never reaches the broker or the management clusters.",
};
/** The cli's own folder, what CLI_IMPORTS allows and cloudevents/ (noBroker says why) are not listed. */
const cliForbidden = Object.keys(LAYERS).filter(
  (f) => f !== "hcpctl" && f !== "cloudevents" && !CLI_IMPORTS.includes(f),
);
const onlyCliImports = {
  regex: `^(\\.\\./)+(${cliForbidden.join("|")})(/|$)`,
  message: `hcpctl imports only ${CLI_IMPORTS.map((f) => `${f}/`).join(", ")} and its own files; what it reads of a controller is named in api/.`,
};
const notSibling = (sibling) => ({
  regex: `^(\\.\\./)+${sibling}(/|$)`,
  message: `cluster/ and nodepool/ are siblings: shared vocabulary belongs in operators/hcp/, not in ${sibling}/.`,
});
/** operators/api/ imports nothing outside itself: from depth d, at most d-1 "../" and no package. */
const onlyApi = (depth) => ({
  regex: depth === 1 ? "^(?!\\./)" : `^(?!\\./|(\\.\\./){1,${depth - 1}}[^./])`,
  message: "The API layer depends on nothing outside operators/api/.",
});

const LAYERED = layersOf(operatorFolders(import.meta.dirname)).filter(([, layer]) => layer !== "api");
const UPPER = Object.keys(LAYERS).filter((f) => LAYERS[f] === "controller" || LAYERS[f] === "cli");
const noUpperLayer = {
  regex: `^(\\.\\./)+(${UPPER.join("|")})(/|$)`,
  message: "A library folder is what controllers are built from: it imports no controller and no CLI.",
};

/** The restricted patterns of one folder by its layer (the rule takes one list per file). */
function layerPatterns(folder, layer) {
  const patterns = [];
  if (layer === "library") patterns.push(noUpperLayer);
  if (layer === "controller" || (layer === "library" && folder !== "cloudevents")) patterns.push(noTransport);
  if (layer === "cli") patterns.push(noBroker, onlyCliImports);
  if (folder === "nodepool") patterns.push(notSibling("cluster"));
  if (folder === "cluster") patterns.push(notSibling("nodepool"));
  return patterns;
}

/**
 * Every file under operators/ gets the dev-tools rule, then a controller's or the API's folder
 * replaces it with its full list: a later block replaces an earlier one's options, it does not add.
 */
function layerBlocks() {
  const blocks = [
    { files: ["operators/**/*.ts"], ignores: ["**/*.test.ts"], patterns: [noDevTools] },
    { files: ["operators/**/*.test.ts"], patterns: [onlyTestSupport] },
  ];
  for (const [folder, layer] of LAYERED) {
    const own = layerPatterns(folder, layer);
    blocks.push(
      { files: [`operators/${folder}/**/*.ts`], ignores: ["**/*.test.ts"], patterns: [noDevTools, ...own] },
      { files: [`operators/${folder}/**/*.test.ts`], patterns: [onlyTestSupport, ...own] },
    );
  }
  for (const depth of [1, 2, 3]) {
    blocks.push({
      files: [`operators/api/${"*/".repeat(depth - 1)}*.ts`],
      ignores: ["**/*.test.ts"],
      patterns: [onlyApi(depth)],
    });
  }
  return blocks.map(({ patterns, ...block }) => ({
    ...block,
    rules: { "no-restricted-imports": ["error", { patterns }] },
  }));
}

export default tseslint.config(
  // test/lint/fixtures/ breaks the rules on purpose; test/lint/layers.test.ts lints it with ignore off.
  { ignores: ["node_modules/", "dist/", "coverage/", ".local/", "test/lint/fixtures/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      complexity: ["error", 12],
      "max-depth": ["error", 3],
      "max-params": ["error", 4],
      "@typescript-eslint/explicit-module-boundary-types": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  ...layerBlocks(),
  {
    files: ["**/*.test.ts", "test/**/*.ts"],
    rules: {
      "@typescript-eslint/explicit-module-boundary-types": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  // JavaScript has no annotations to write; its types, where TypeScript reads it, are a .d.ts beside it.
  { files: ["**/*.js"], rules: { "@typescript-eslint/explicit-module-boundary-types": "off" } },
  prettier,
);
