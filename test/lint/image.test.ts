/**
 * The image as the Dockerfile and .dockerignore make it, without a container engine: its files
 * are what the final stage's COPY lines take from the build context, less what .dockerignore
 * leaves out. Each subcommand's import graph (static and dynamic imports, from
 * operators/hcp-operators.ts through its main) must be inside it and import only production
 * dependencies; nothing of test/ or hack/ and no test file may be. The Dockerfile itself passes
 * dockerfile-utils' linter with every check an error.
 */
import { Copy, DockerfileParser, type Instruction } from "dockerfile-ast";
import { ValidationSeverity, validate } from "dockerfile-utils";
import { createRequire } from "node:module";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMPONENTS } from "../../operators/hcp-operators.ts";

/** What is used of @balena/dockerignore (Docker's own matching rules, as its daemon applies them). */
interface IgnoreRules {
  add(patterns: string[]): IgnoreRules;
  ignores(path: string): boolean;
}
// CommonJS whose typings declare an ES default export that Node does not give: required directly.
const dockerignore = createRequire(import.meta.url)("@balena/dockerignore") as () => IgnoreRules;

const root = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY = "operators/hcp-operators.ts";
const MAINS: Record<keyof typeof COMPONENTS, string> = {
  operators: "operators/main.ts",
  frontend: "operators/frontend/main.ts",
  "maestro-agent": "operators/maestro-agent/main.ts",
  portal: "operators/portal/main.ts",
  gate: "operators/sessiongate/main.ts",
};

/** The final stage's instructions: everything after the last FROM. */
function finalStage(dockerfile: string): Instruction[] {
  const instructions = DockerfileParser.parse(dockerfile).getInstructions();
  const lastFrom = instructions.findLastIndex((i) => i.getKeyword() === "FROM");
  return instructions.slice(lastFrom + 1);
}

/** Files of the build context below `path` (a file or a folder), relative to the repository. */
function contextFiles(path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) throw new Error(`COPY source ${path} does not exist`);
  if (!statSync(full).isDirectory()) return [posix.normalize(path)];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/**
 * The image's files taken from the build context, as paths below WORKDIR. Sources copied from
 * another stage (--from) are not from the context: they are listed by the stage's destination.
 */
export function imageFiles(
  dockerfile: string,
  ignoreFile: string,
): { files: Set<string>; fromStages: string[] } {
  const ignore = dockerignore().add(ignoreFile.split("\n"));
  const files = new Set<string>();
  const fromStages: string[] = [];
  for (const copy of finalStage(dockerfile).filter((i): i is Copy => i instanceof Copy)) {
    const sources = copy.getArguments().map((a) => a.getValue());
    const dest = sources.pop() ?? "";
    if (copy.getFromFlag()) {
      fromStages.push(dest);
      continue;
    }
    for (const source of sources) {
      // A folder's contents land in dest, a file lands in dest under its own name.
      const isFolder = statSync(join(root, source)).isDirectory();
      for (const file of contextFiles(source).filter((f) => !ignore.ignores(f))) {
        const inSource = isFolder ? relative(source, file) : posix.basename(file);
        files.add(posix.normalize(posix.join(dest, inSource)));
      }
    }
  }
  return { files, fromStages };
}

const VALUE_IMPORT = /^\s*(?:import|export)\s(?!type\s)[^;]*?\sfrom\s+"([^"]+)"/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*"([^"]+)"\s*\)/g;
const SIDE_EFFECT_IMPORT = /^\s*import\s+"([^"]+)"/gm;

/** The package a bare specifier names: "@scope/name/sub" → "@scope/name". */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/** The repository files and the packages reachable from `entries` by value imports. */
export function reachable(entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(join(root, file), "utf8");
    for (const match of [VALUE_IMPORT, DYNAMIC_IMPORT, SIDE_EFFECT_IMPORT].flatMap((re) => [
      ...text.matchAll(re),
    ])) {
      const specifier = match[1] ?? "";
      if (specifier.startsWith(".")) visit(relative(root, resolve(dirname(join(root, file)), specifier)));
      else if (!specifier.startsWith("node:")) packages.add(packageName(specifier));
    }
  };
  for (const entry of entries) visit(entry);
  return { files, packages };
}

const read = (path: string): string => readFileSync(join(root, path), "utf8");
const manifest = JSON.parse(read("package.json")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe("the image", () => {
  const dockerfile = read("Dockerfile");
  const { files, fromStages } = imageFiles(dockerfile, read(".dockerignore"));

  it("passes the Dockerfile linter with every check an error", () => {
    const everyCheck = Object.fromEntries(
      [
        "deprecatedMaintainer",
        "directiveCasing",
        "emptyContinuationLine",
        "instructionCasing",
        "instructionCmdMultiple",
        "instructionEntrypointMultiple",
        "instructionHealthcheckMultiple",
        "instructionJSONInSingleQuotes",
        "instructionWorkdirRelative",
      ].map((k) => [k, ValidationSeverity.ERROR]),
    );
    const problems = validate(dockerfile, everyCheck).map(
      (d) => `line ${d.range.start.line + 1}: ${JSON.stringify(d.message)}`,
    );
    expect(problems).toEqual([]);
  });

  it("runs every component through one entry point, as a numeric non-root user", () => {
    const stage = finalStage(dockerfile);
    const entrypoint = stage.find((i) => i.getKeyword() === "ENTRYPOINT")?.getArgumentsContent();
    expect(JSON.parse(entrypoint ?? "null")).toEqual(["node", ENTRY]);
    // Numeric, so the kubelet can check runAsNonRoot without the image's /etc/passwd.
    const user = stage.findLast((i) => i.getKeyword() === "USER")?.getArgumentsContent() ?? "";
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(Object.keys(COMPONENTS).sort()).toEqual(Object.keys(MAINS).sort());
  });

  it("installs the production dependencies only, in a stage of their own", () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(fromStages).toEqual(["node_modules/"]);
    // The lockfile stays in the dependencies stage: the final image has no npm step to feed.
    expect(files).toContain("package.json");
  });

  it.each(Object.entries(MAINS))("holds everything `%s` imports, and only production packages", (_, main) => {
    const graph = reachable([ENTRY, main]);
    expect(graph.files).toContain(main);
    const missing = [...graph.files].filter((f) => !files.has(f));
    expect(missing).toEqual([]);
    const notProduction = [...graph.packages].filter((p) => !(p in manifest.dependencies));
    expect(notProduction).toEqual([]);
  });

  // hcpctl is in: the portal draws with its model (a tree, a trace); hcpctl reads the service
  // cluster only, so it is no development tool.
  it("holds nothing of test/ or hack/, no test file and no development tool", () => {
    const unwanted = [...files].filter(
      (f) => /^(test|hack|crds|\.local|\.git)\//.test(f) || f.endsWith(".test.ts"),
    );
    expect(unwanted).toEqual([]);
  });
});
