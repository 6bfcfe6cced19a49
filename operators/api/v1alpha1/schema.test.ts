/**
 * The CRDs (crds/hcp.aro.dev_*.yaml) and the TypeScript types in this folder are written by hand,
 * twice. This walk ties them together. The TypeScript compiler reads the types as tsc sees them,
 * and each CRD's openAPIV3Schema is compared with the interface named after its kind, both ways:
 * - the same property names at every level;
 * - optional in TypeScript exactly when not `required` in the schema;
 * - compatible types (string, number, boolean, arrays, objects, maps);
 * - string unions equal to the schema's enums.
 * A field added on one side only fails here.
 */
import { load } from "js-yaml";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** The part of a CRD structural schema the walk compares. */
interface Schema {
  type?: string;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}

interface CrdDoc {
  spec: { names: { kind: string }; versions: Array<{ name: string; schema: { openAPIV3Schema: Schema } }> };
}

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const crdDir = join(repo, "crds");
const entry = fileURLToPath(new URL("./index.ts", import.meta.url));
/** Root fields every object has; KubeObject types them, the API server serves them. */
const KUBE_OBJECT_FIELDS = new Set(["apiVersion", "kind", "metadata"]);

interface TypeScriptApi {
  checker: ts.TypeChecker;
  /** The declared type of an interface or type alias exported by index.ts. */
  exported(name: string): ts.Type | undefined;
}

/** A program over index.ts with the repository's compiler options. */
function readTypes(): TypeScriptApi {
  const configPath = join(repo, "tsconfig.json");
  const config: unknown = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p)).config;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, dirname(configPath));
  const program = ts.createProgram([entry], options);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`TypeScript could not read ${entry}`);
  const exports = new Map(checker.getExportsOfModule(module).map((s) => [s.name, s]));
  return {
    checker,
    exported(name) {
      const symbol = exports.get(name);
      if (!symbol) return undefined;
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return checker.getDeclaredTypeOfSymbol(target);
    },
  };
}

function crds(): Array<{ file: string; kind: string; versions: CrdDoc["spec"]["versions"] }> {
  return readdirSync(crdDir)
    .filter((f) => f.startsWith("hcp.aro.dev_") && f.endsWith(".yaml"))
    .map((file) => {
      const crd = load(readFileSync(join(crdDir, file), "utf8")) as CrdDoc;
      return { file, kind: crd.spec.names.kind, versions: crd.spec.versions };
    });
}

/** A string or number literal type's value as the schema's enum would spell it. */
function literalText(type: ts.LiteralType): string {
  return typeof type.value === "object" ? type.value.base10Value : String(type.value);
}

/** Compares one TypeScript type with one schema node, collecting every difference. */
class Walk {
  readonly issues: string[] = [];
  readonly #checker: ts.TypeChecker;

  constructor(checker: ts.TypeChecker) {
    this.#checker = checker;
  }

  node(path: string, declared: ts.Type, schema: Schema): void {
    const type = this.#checker.getNonNullableType(declared);
    switch (schema.type) {
      case "string":
        return this.#scalar(path, type, schema, ts.TypeFlags.StringLike);
      case "integer":
      case "number":
        return this.#scalar(path, type, schema, ts.TypeFlags.NumberLike);
      case "boolean":
        return this.#scalar(path, type, schema, ts.TypeFlags.BooleanLike);
      case "array":
        return this.#array(path, type, schema);
      case "object":
        return this.#object(path, type, schema);
      default:
        this.issues.push(`${path}: schema type ${String(schema.type)} is not compared`);
    }
  }

  /** The named properties of an object node, both ways, with their optionality. */
  properties(path: string, type: ts.Type, schema: Schema, skip = new Set<string>()): void {
    const at = (name: string): string => (path ? `${path}.${name}` : name);
    const props = new Map(this.#checker.getPropertiesOfType(type).map((p) => [p.name, p]));
    const fields = schema.properties ?? {};
    for (const name of props.keys())
      if (!(name in fields)) this.issues.push(`${at(name)}: in TypeScript, not in the CRD`);
    for (const [name, child] of Object.entries(fields)) {
      const prop = props.get(name);
      if (!prop) this.issues.push(`${at(name)}: in the CRD, not in TypeScript`);
      else if (!skip.has(name))
        this.#property(at(name), prop, child, schema.required?.includes(name) ?? false);
    }
  }

  #property(path: string, prop: ts.Symbol, schema: Schema, required: boolean): void {
    const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
    if (optional === required)
      this.issues.push(`${path}: ${required ? "required" : "optional"} in the CRD, not in TypeScript`);
    this.node(path, this.#checker.getTypeOfSymbol(prop), schema);
  }

  #scalar(path: string, type: ts.Type, schema: Schema, flags: ts.TypeFlags): void {
    const parts = type.flags & ts.TypeFlags.Boolean ? [type] : type.isUnion() ? type.types : [type];
    if (!parts.every((p) => p.flags & flags)) {
      this.issues.push(
        `${path}: ${schema.type} in the CRD, ${this.#checker.typeToString(type)} in TypeScript`,
      );
      return;
    }
    const literals = parts.every((p) => p.isLiteral()) ? parts.map(literalText) : undefined;
    const enumValues = schema.enum?.map(String);
    const set = (values: string[] | undefined): string => JSON.stringify(values && [...values].sort());
    if (set(literals) !== set(enumValues))
      this.issues.push(`${path}: enum ${set(enumValues)} in the CRD, ${set(literals)} in TypeScript`);
  }

  #array(path: string, type: ts.Type, schema: Schema): void {
    const element = this.#checker.isArrayType(type)
      ? this.#checker.getTypeArguments(type as ts.TypeReference)[0]
      : undefined;
    if (!element || !schema.items) {
      this.issues.push(`${path}: array in the CRD, ${this.#checker.typeToString(type)} in TypeScript`);
      return;
    }
    this.node(`${path}[]`, element, schema.items);
  }

  #object(path: string, type: ts.Type, schema: Schema): void {
    if (!(type.flags & ts.TypeFlags.Object)) {
      this.issues.push(`${path}: object in the CRD, ${this.#checker.typeToString(type)} in TypeScript`);
      return;
    }
    const map = this.#checker.getIndexInfoOfType(type, ts.IndexKind.String);
    if (typeof schema.additionalProperties === "object") {
      if (!map) this.issues.push(`${path}: a map in the CRD, not in TypeScript`);
      else this.node(`${path}{}`, map.type, schema.additionalProperties);
    } else if (map) this.issues.push(`${path}: a map in TypeScript, not in the CRD`);
    this.properties(path, type, schema);
  }
}

describe("CRDs and TypeScript types of hcp.aro.dev/v1alpha1", () => {
  const types = readTypes();
  const all = crds();

  it("has a CRD for every kind and only v1alpha1", () => {
    expect(all.map((c) => c.kind).sort()).toEqual([
      "AccessSession",
      "BreakglassCredential",
      "BreakglassRevocation",
      "ExternalAuth",
      "HcpCluster",
      "MaintenanceRun",
      "MaintenanceTask",
      "ManagementCluster",
      "NodePool",
      "Rollout",
    ]);
    for (const c of all) expect(c.versions.map((v) => v.name)).toEqual(["v1alpha1"]);
  });

  it.each(all.map((c) => [c.kind, c] as const))("%s matches its CRD field for field", (kind, crd) => {
    const type = types.exported(kind);
    expect(type, `${kind} is not exported from operators/api/v1alpha1`).toBeDefined();
    const walk = new Walk(types.checker);
    const root = crd.versions[0]!.schema.openAPIV3Schema;
    // The root's own fields (spec, status) are walked; the KubeObject ones only need to exist.
    walk.properties("", type!, root, KUBE_OBJECT_FIELDS);
    expect(walk.issues).toEqual([]);
  });
});
