/**
 * The repository's import graph, read from the sources, and its cycles: what `import-x/no-cycle`
 * would report, without a native resolver (the registries this project installs from do not
 * carry that resolver's builds for every platform, so a lockfile with it cannot be installed
 * everywhere). Relative imports only: packages cannot import back into the repository.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** Value imports only: a type-only import is erased before run time, so it closes no cycle. */
const IMPORT = /^\s*(?:import|export)\s(?!type\s)[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gm;
const SKIP = new Set(["node_modules", ".git", ".local", "fixtures"]);

/** Every .ts file below `dir`, skipping dependencies, local state and deliberate fixtures. */
export function sourceFiles(dir: string, skip: ReadonlySet<string> = SKIP): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return skip.has(e.name) ? [] : sourceFiles(path, skip);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** file → the repository files it imports (relative specifiers, resolved). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), m[1] ?? ""));
    graph.set(file, targets);
  }
  return graph;
}

/** Each cycle once, as the files along it (relative to `root`), found by depth-first search. */
export function cycles(graph: ReadonlyMap<string, string[]>, root: string): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "active");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "active")
        found.push(stack.slice(stack.indexOf(next)).map((f) => relative(root, f)));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}
