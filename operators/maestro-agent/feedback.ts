/**
 * Status feedback: values read from an applied object's status by the work's feedback rules.
 * WellKnownStatus reads OCM's fixed fields per kind; JSONPaths evaluates kubectl-style paths
 * against the whole object (`.status.readyReplicas`), as OCM's agent does, taking the first match. Integers, strings and booleans keep their type; lists and objects travel as
 * raw JSON (Maestro enables raw feedback, up to 1 MiB).
 */
import { JSONPath } from "jsonpath-plus";
import type { FeedbackRule, FeedbackValue, FieldValue } from "../api/work/v1.ts";

export const MAX_JSON_RAW_BYTES = 1024 * 1024;

/** OCM's well-known status fields: name → path, per group/kind. */
const wellKnown: Record<string, Record<string, string>> = {
  "apps/Deployment": {
    ReadyReplicas: ".status.readyReplicas",
    Replicas: ".status.replicas",
    AvailableReplicas: ".status.availableReplicas",
  },
  "apps/DaemonSet": {
    NumberReady: ".status.numberReady",
    DesiredNumberScheduled: ".status.desiredNumberScheduled",
    NumberAvailable: ".status.numberAvailable",
  },
  "batch/Job": {
    JobComplete: '.status.conditions[?(@.type=="Complete")].status',
    JobSucceeded: ".status.succeeded",
  },
  "/Pod": { PodReady: '.status.conditions[?(@.type=="Ready")].status', PodPhase: ".status.phase" },
};

export function toFieldValue(value: unknown): FieldValue | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return { type: "Integer", integer: value };
  if (typeof value === "string") return { type: "String", string: value };
  if (typeof value === "boolean") return { type: "Boolean", boolean: value };
  if (typeof value === "object" && value !== null) {
    const raw = JSON.stringify(value);
    if (Buffer.byteLength(raw, "utf8") > MAX_JSON_RAW_BYTES)
      throw new Error(`value is larger than ${MAX_JSON_RAW_BYTES} bytes`);
    return { type: "JsonRaw", jsonRaw: raw };
  }
  return undefined;
}

/** The first value at a kubectl-style path of the object; undefined when absent. */
export function readPath(obj: unknown, path: string): unknown {
  const expr = "$" + (path.startsWith(".") || path.startsWith("[") ? path : `.${path}`);
  const results = JSONPath({ path: expr, json: obj ?? {}, wrap: true }) as unknown[];
  return results[0];
}

/** What ends a field name in a kubectl-style path, as in Kubernetes' jsonpath lexer (and quotes, parens). */
const NAME_TERMINATORS = new Set([
  " ",
  "\t",
  "\n",
  "\r",
  ".",
  ",",
  "[",
  "]",
  "$",
  "@",
  "{",
  "}",
  "(",
  ")",
  "'",
  '"',
]);
/** What may stand between brackets: *, an index, a slice, a list of indexes or of quoted names. */
const QUOTED = `('[^']*'|"[^"]*")`;
const SUBSCRIPT = new RegExp(
  `^(\\*|-?\\d*:-?\\d*(:-?\\d*)?|-?\\d+(\\s*,\\s*-?\\d+)*|${QUOTED}(\\s*,\\s*${QUOTED})*)$`,
);

/** The end of the field name that starts at `i`. */
function nameEnd(path: string, i: number): number {
  let j = i;
  while (j < path.length && !NAME_TERMINATORS.has(path[j] ?? "")) j += path[j] === "\\" ? 2 : 1;
  return Math.min(j, path.length);
}

/** The index just past the bracket that closes the one opened at `open`, quotes respected; -1 if none. */
function closing(path: string, open: number, closer: string): number {
  let quote = "";
  for (let j = open + 1; j < path.length; j++) {
    const c = path[j] ?? "";
    if (quote) quote = c === quote ? "" : quote;
    else if (c === "'" || c === '"') quote = c;
    else if (c === closer) return j + 1;
  }
  return -1;
}

/** A `[...]` at `i`: a subscript, or a filter `[?(...)]`; the index past it, or what is wrong. */
function bracketEnd(path: string, i: number): number | string {
  if (path.startsWith("[?(", i)) {
    const end = closing(path, i + 2, ")");
    if (end < 0 || path[end] !== "]") return `unclosed filter "[?(" at character ${i}`;
    return end + 1;
  }
  const end = closing(path, i, "]");
  if (end < 0) return `unclosed "[" at character ${i}`;
  const subscript = path.slice(i + 1, end - 1).trim();
  if (!subscript || !SUBSCRIPT.test(subscript)) return `bad subscript "[${subscript}]" at character ${i}`;
  return end;
}

/** One `.name`, `..name`, `.*`, `[...]` or `..[...]` at `i`; the index past it, or what is wrong. */
function segmentEnd(path: string, i: number): number | string {
  if (path[i] === "[") return bracketEnd(path, i);
  if (path[i] !== ".") return `unexpected "${path[i] ?? ""}" at character ${i}`;
  const j = path[i + 1] === "." ? i + 2 : i + 1;
  if (j > i + 1 && path[j] === "[") return bracketEnd(path, j);
  if (path[j] === "*") return j + 1;
  const end = nameEnd(path, j);
  return end > j ? end : `expected a field name at character ${j}`;
}

/**
 * What is wrong with a kubectl-style path (`.status.conditions[?(@.type=="Ready")].status`), or
 * undefined. The evaluator is lenient (it reads `.status[` as `.status`), so the syntax is
 * checked first, as OCM's agent has Kubernetes' jsonpath parse it; a bad path is an error the
 * work reports, never a value silently missing.
 */
export function jsonPathProblem(path: string): string | undefined {
  if (path.trim() === "") return "the path is empty";
  let i = path.startsWith("$") ? 1 : 0;
  // A leading field without its dot (`status.replicas`) has always been read; it stays accepted.
  if (i === 0 && path[0] !== "." && path[0] !== "[") i = nameEnd(path, 0);
  while (i < path.length) {
    const end = segmentEnd(path, i);
    if (typeof end === "string") return end;
    i = end;
  }
  return undefined;
}

const MAX_QUOTED_PATH = 200;

export interface FeedbackResult {
  values: FeedbackValue[];
  /** Rule errors, named by rule: a bad path or an oversized value. */
  errors: string[];
}

/**
 * The values the rules read from `obj`, and each rule's error. Without an object (not there yet)
 * only the paths are checked, so a bad one is reported either way.
 */
export function collectFeedback(
  obj: { apiVersion?: string; kind?: string } | undefined,
  rules: FeedbackRule[],
): FeedbackResult {
  const values: FeedbackValue[] = [];
  const errors: string[] = [];
  const group = obj?.apiVersion?.includes("/") ? obj.apiVersion.split("/")[0] : "";
  const read = (name: string, path: string): void => {
    const problem = jsonPathProblem(path);
    if (problem) {
      const quoted = path.length > MAX_QUOTED_PATH ? `${path.slice(0, MAX_QUOTED_PATH)}…` : path;
      errors.push(`${name}: invalid JSONPath "${quoted}": ${problem}`);
      return;
    }
    if (!obj) return;
    try {
      const fieldValue = toFieldValue(readPath(obj, path));
      if (fieldValue) values.push({ name, fieldValue });
    } catch (err) {
      errors.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  for (const rule of rules) {
    if (rule.type === "WellKnownStatus") {
      for (const [name, path] of Object.entries(wellKnown[`${group}/${obj?.kind ?? ""}`] ?? {}))
        read(name, path);
    } else {
      for (const jp of rule.jsonPaths ?? []) read(jp.name, jp.path);
    }
  }
  return { values, errors };
}
