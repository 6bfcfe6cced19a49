/**
 * docs/arm-field-table.md has one row per property of every served api-version's cluster, node
 * pool and external auth schema, saying which spec field it becomes and what honours it, or why
 * it is ARM-only or read-only, or that it is a gap (#31). A property without a row, a row for a
 * property no schema has, a row that names no spec field or nothing that honours it, a spec field
 * the CRD does not have, or a gap not in GAPS below fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { API_VERSIONS, SCHEMAS, type ApiVersion } from "../../operators/frontend/api/registry.ts";
import type { Schema } from "../../operators/frontend/api/schema.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const DOC = "docs/arm-field-table.md";

/** The settings accepted today that reach nothing (#31): a gap closes by changing the doc and this. */
const GAPS = [
  "cluster properties.platform.operatorsAuthentication.userAssignedIdentities.serviceManagedIdentity",
];

type Kind = "cluster" | "nodePool" | "externalAuth";
const KINDS: Kind[] = ["cluster", "nodePool", "externalAuth"];
const CRDS: Record<Kind, string> = {
  cluster: "crds/hcp.aro.dev_hcpclusters.yaml",
  nodePool: "crds/hcp.aro.dev_nodepools.yaml",
  externalAuth: "crds/hcp.aro.dev_externalauths.yaml",
};
const STATUSES = ["spec", "ARM-only", "read-only", "gap"] as const;

/**
 * The table's leaves of a schema, each read-only or not: scalars, any-typed values and read-only
 * subtrees (computed as a whole) are one row; an object is its fields; an array of objects is its
 * items' fields (`labels[].key`), an array of scalars one row; a map is one row (its keys are
 * data), and a map of objects also its values' fields (`userAssignedIdentities.*.clientId`).
 */
function leaves(s: Schema, path: string, out: Map<string, boolean>): Map<string, boolean> {
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (s.readOnly) out.set(path, true);
  else if (s.type === "object")
    for (const [key, child] of Object.entries(s.properties)) {
      if (child) leaves(child, at(key), out);
    }
  else if (s.type === "array" && s.items.type === "object" && !s.items.readOnly)
    leaves(s.items, `${path}[]`, out);
  else {
    out.set(path, false);
    if (s.type === "map" && s.values.type === "object") leaves(s.values, at("*"), out);
  }
  return out;
}

interface SchemaLeaf {
  versions: ApiVersion[];
  readOnly: boolean;
}

/** Every leaf of a kind over all served versions: `kind path` → the versions that have it. */
function schemaLeaves(): Map<string, SchemaLeaf> {
  const all = new Map<string, SchemaLeaf>();
  for (const v of API_VERSIONS)
    for (const kind of KINDS)
      for (const [path, readOnly] of leaves(SCHEMAS[v][kind], "", new Map())) {
        const key = `${kind} ${path}`;
        const leaf = all.get(key) ?? { versions: [], readOnly };
        leaf.versions.push(v);
        leaf.readOnly &&= readOnly;
        all.set(key, leaf);
      }
  return all;
}

interface Row {
  kind: Kind;
  path: string;
  versions: string;
  specFields: string[];
  honouredBy: string;
  status: string;
  line: number;
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, "");

/** The table's rows: pipe-separated lines under a `## … (\`kind\`)` heading. */
function rows(): Row[] {
  const out: Row[] = [];
  let kind: Kind | undefined;
  readFileSync(join(root, DOC), "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.startsWith("## ")) kind = KINDS.find((k) => line.includes(`(\`${k}\`)`));
      if (!kind || !line.startsWith("|") || /^\|\s*(ARM property|-)/.test(line)) return;
      const [path = "", versions = "", spec = "", honouredBy = "", status = ""] = line
        .slice(1, line.trimEnd().endsWith("|") ? line.trimEnd().length - 1 : undefined)
        .split("|")
        .map((c) => c.trim());
      const specFields = [...spec.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");
      out.push({ kind, path: unquote(path), versions, specFields, honouredBy, status, line: i + 1 });
    });
  return out;
}

/** `all`, `≥ V`, `< V`, or versions separated by commas. */
function versionsOf(text: string): string[] {
  const index = (v: string) => API_VERSIONS.findIndex((x) => x === v.replace(/[≥<]\s*/, "").trim());
  if (text === "all") return [...API_VERSIONS];
  if (text.startsWith("≥")) return API_VERSIONS.slice(index(text));
  if (text.startsWith("<")) return API_VERSIONS.slice(0, index(text));
  return text.split(",").map((v) => v.trim());
}

interface CrdSchema {
  properties?: Record<string, CrdSchema>;
  items?: CrdSchema;
}

function crdSchema(kind: Kind): CrdSchema {
  const crd = load(readFileSync(join(root, CRDS[kind]), "utf8")) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: CrdSchema } }> };
  };
  return crd.spec.versions[0]?.schema.openAPIV3Schema ?? {};
}

/** Whether `spec.a.b[].c` is a field of the CRD's schema. */
function crdHas(schema: CrdSchema, path: string): boolean {
  let at: CrdSchema | undefined = schema;
  for (const segment of path.split(".")) {
    const name = segment.replace(/\[\]$/, "");
    at = at?.properties?.[name];
    if (segment.endsWith("[]")) at = at?.items;
    if (!at) return false;
  }
  return true;
}

describe(DOC, () => {
  const table = rows();
  const key = (r: Row) => `${r.kind} ${r.path}`;
  const schema = schemaLeaves();

  it("has rows, each with a known status, once", () => {
    expect(table.length).toBeGreaterThan(100);
    expect(
      table.filter((r) => !(STATUSES as readonly string[]).includes(r.status)).map((r) => r.line),
    ).toEqual([]);
    const keys = table.map(key);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });

  it("has a row for every property of every served api-version", () => {
    const listed = new Set(table.map(key));
    expect([...schema.keys()].filter((k) => !listed.has(k))).toEqual([]);
  });

  it("has no row for a property no served api-version has", () => {
    expect(table.filter((r) => !schema.has(key(r))).map(key)).toEqual([]);
  });

  it("names the api-versions that have each property", () => {
    const wrong = table
      .filter((r) => schema.has(key(r)))
      .filter((r) => versionsOf(r.versions).join() !== schema.get(key(r))?.versions.join())
      .map((r) => `${key(r)}: ${r.versions}, not ${schema.get(key(r))?.versions.join(", ")}`);
    expect(wrong).toEqual([]);
  });

  it("marks read-only exactly the properties read-only in every version", () => {
    const wrong = table
      .filter((r) => schema.has(key(r)))
      .filter((r) => (r.status === "read-only") !== schema.get(key(r))?.readOnly)
      .map(key);
    expect(wrong).toEqual([]);
  });

  it("names the spec field and what honours it of every property that takes effect", () => {
    const blank = (text: string) => text === "" || text === "—";
    const wrong = table
      .filter((r) => r.status === "spec")
      .filter((r) => r.specFields.length === 0 || blank(r.honouredBy))
      .map(key);
    expect(wrong).toEqual([]);
    expect(table.filter((r) => blank(r.honouredBy)).map(key)).toEqual([]);
  });

  it("names only spec fields the CRDs have", () => {
    const crds = Object.fromEntries(KINDS.map((k) => [k, crdSchema(k)])) as Record<Kind, CrdSchema>;
    const wrong = table.flatMap((r) =>
      r.specFields
        .filter((f) => !f.startsWith("spec.") || !crdHas(crds[r.kind], f))
        .map((f) => `${key(r)}: ${f}`),
    );
    expect(wrong).toEqual([]);
  });

  it("lists as gaps exactly the known gaps (#31)", () => {
    expect(table.filter((r) => r.status === "gap").map(key)).toEqual(GAPS);
  });
});
