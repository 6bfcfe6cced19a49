/**
 * docs/configuration.md lists every flag of every subcommand and every environment variable the
 * product reads: a flag added to a main, or a variable read under operators/, without a line
 * there fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "./import-graph.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const doc = readFileSync(join(root, "docs/configuration.md"), "utf8");
const MAINS = {
  operators: "operators/main.ts",
  frontend: "operators/frontend/main.ts",
  "maestro-agent": "operators/maestro-agent/main.ts",
};

/** The option names of a main's parseArgs call (`name: { type: … }` inside `options: {…}`). */
function flags(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const options = /options:\s*\{([\s\S]*?)\n\s{4}\},/.exec(text)?.[1] ?? "";
  return [...options.matchAll(/^\s*"?([a-z][a-z-]*)"?:\s*\{\s*type:/gm)].map((m) => m[1] ?? "");
}

/** The section of the doc about one subcommand. */
function section(component: string): string {
  const start = doc.indexOf(`## \`hcp-operators ${component}\``);
  const end = doc.indexOf("\n## ", start + 1);
  return start < 0 ? "" : doc.slice(start, end < 0 ? undefined : end);
}

describe("docs/configuration.md", () => {
  it.each(Object.entries(MAINS))("lists every flag of `hcp-operators %s`", (component, main) => {
    const all = flags(main);
    expect(all.length).toBeGreaterThan(3);
    const text = section(component);
    expect(all.filter((f) => !text.includes(`\`--${f}`) && !text.includes(`\`, \`--${f}`))).toEqual([]);
  });

  it("lists every environment variable the product reads", () => {
    const files = sourceFiles(join(root, "operators")).filter((f) => !f.endsWith(".test.ts"));
    const read = new Set(
      files.flatMap((f) =>
        [...readFileSync(f, "utf8").matchAll(/process\.env(?:\.([A-Z_]+)|\["([A-Z_]+)"\])/g)].map(
          (m) => m[1] ?? m[2] ?? "",
        ),
      ),
    );
    expect(read.size).toBeGreaterThan(0);
    expect([...read].filter((v) => !doc.includes(`\`${v}\``))).toEqual([]);
  });
});
