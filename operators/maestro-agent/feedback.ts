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

export interface FeedbackResult {
  values: FeedbackValue[];
  /** Rule errors, named by rule: a bad path or an oversized value. */
  errors: string[];
}

export function collectFeedback(
  obj: { apiVersion?: string; kind?: string },
  rules: FeedbackRule[],
): FeedbackResult {
  const values: FeedbackValue[] = [];
  const errors: string[] = [];
  const group = obj.apiVersion?.includes("/") ? obj.apiVersion.split("/")[0] : "";
  const read = (name: string, path: string): void => {
    try {
      const fieldValue = toFieldValue(readPath(obj, path));
      if (fieldValue) values.push({ name, fieldValue });
    } catch (err) {
      errors.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  for (const rule of rules) {
    if (rule.type === "WellKnownStatus") {
      for (const [name, path] of Object.entries(wellKnown[`${group}/${obj.kind ?? ""}`] ?? {}))
        read(name, path);
    } else {
      for (const jp of rule.jsonPaths ?? []) read(jp.name, jp.path);
    }
  }
  return { values, errors };
}
