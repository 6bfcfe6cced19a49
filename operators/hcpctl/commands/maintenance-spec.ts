/**
 * What `hcpctl maintenance run` and `hcpctl rollout start` ask for, checked before any write: each
 * bad flag refused naming the flag. The API server has the last word (label keys and values, CEL
 * rules); its refusal is shown field by field with the flag that set the field.
 */
import {
  MAINTENANCE_CONCURRENCY,
  MAINTENANCE_TASK_TYPES,
  type MaintenanceClusters,
  type MaintenanceTaskType,
} from "../../api/v1alpha1/index.ts";
import { KubeApiError } from "../../runtime/kube.ts";
import { CliError } from "../errors.ts";

const DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const CLUSTER_REF = new RegExp(`^${DNS_LABEL}/${DNS_LABEL}$`);
const OBJECT_NAME = new RegExp(`^${DNS_LABEL}(\\.${DNS_LABEL})*$`);
const RELEASE = /^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The task type as the CRD spells it, matched without regard to case. */
export function parseTaskType(text: string, what: string): MaintenanceTaskType {
  const found = MAINTENANCE_TASK_TYPES.find((t) => t.toLowerCase() === text.toLowerCase());
  if (!found)
    throw new CliError(`unknown ${what} "${text}": expected one of ${MAINTENANCE_TASK_TYPES.join(", ")}`);
  return found;
}

/** "ns/name,ns/name" as the CRD's spec.clusters.names; duplicates refused (the list is a set). */
export function parseClusterNames(text: string): string[] {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new CliError("--clusters must name at least one cluster as namespace/name");
  const bad = names.find((n) => !CLUSTER_REF.test(n));
  if (bad) throw new CliError(`--clusters: "${bad}" is not namespace/name (lower-case DNS labels)`);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new CliError(`--clusters names ${twice} twice`);
  return names;
}

/**
 * "k=v,k2=v2" as matchLabels. Only equality: a task's clusters are chosen by what they are, and a
 * set-based selector typed on a command line is easy to get wide by mistake.
 */
export function parseSelector(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text.split(",").map((s) => s.trim())) {
    const m = /^([^=!\s()]+)==?([^=!\s(),]*)$/.exec(part);
    if (!m)
      throw new CliError(
        `--selector takes key=value pairs separated by commas, got "${part}" (set-based selectors are not taken)`,
      );
    const [, key = "", value = ""] = m;
    if (key in labels) throw new CliError(`--selector names the key ${key} twice`);
    labels[key] = value;
  }
  return labels;
}

/** Exactly one of --clusters and --selector. */
export function parseClusters(flags: { clusters?: string; selector?: string }): MaintenanceClusters {
  if (flags.clusters !== undefined && flags.selector !== undefined)
    throw new CliError("--clusters and --selector cannot be given together: name the clusters one way");
  if (flags.clusters !== undefined) return { names: parseClusterNames(flags.clusters) };
  if (flags.selector !== undefined) return { selector: { matchLabels: parseSelector(flags.selector) } };
  throw new CliError("name the clusters: --clusters ns/name,... or --selector key=value");
}

export function parseRelease(text: string): string {
  if (!RELEASE.test(text))
    throw new CliError(`--release must be a major.minor.patch release such as 4.19.10, got "${text}"`);
  return text;
}

export function parseTimestamp(text: string, flag: string): string {
  if (!RFC3339.test(text) || Number.isNaN(Date.parse(text)))
    throw new CliError(`${flag} must be an RFC 3339 time such as 2026-11-28T22:00:00Z, got "${text}"`);
  return text;
}

/** An integer flag within [min, max]. */
export function parseCount(text: string, flag: string, bounds: { min: number; max: number }): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < bounds.min || n > bounds.max)
    throw new CliError(`${flag} must be a whole number from ${bounds.min} to ${bounds.max}, got "${text}"`);
  return n;
}

export const parseMaxPerManagementCluster = (text: string): number =>
  parseCount(text, "--max-per-management-cluster", MAINTENANCE_CONCURRENCY);

export function parseObjectName(text: string, flag: string): string {
  if (text.length > 253 || !OBJECT_NAME.test(text))
    throw new CliError(`${flag} must be a lower-case DNS name (letters, digits, '-', '.'), got "${text}"`);
  return text;
}

/** notBefore and notAfter, each RFC 3339, notAfter after notBefore. */
export function parseWindow(flags: { notBefore?: string; notAfter?: string }): {
  notBefore?: string;
  notAfter?: string;
} {
  const notBefore =
    flags.notBefore === undefined ? undefined : parseTimestamp(flags.notBefore, "--not-before");
  const notAfter = flags.notAfter === undefined ? undefined : parseTimestamp(flags.notAfter, "--not-after");
  if (notBefore && notAfter && Date.parse(notAfter) <= Date.parse(notBefore))
    throw new CliError(`--not-after (${notAfter}) must be after --not-before (${notBefore})`);
  return { ...(notBefore ? { notBefore } : {}), ...(notAfter ? { notAfter } : {}) };
}

interface StatusCause {
  field?: string;
  message?: string;
}

/** The flag that set a field, by the longest field path it begins with. */
function flagOf(field: string, flags: Readonly<Record<string, string>>): string | undefined {
  const match = Object.keys(flags)
    .filter((path) => field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`))
    .sort((a, b) => b.length - a.length)[0];
  return match === undefined ? undefined : flags[match];
}

/**
 * A 422 from the API server as one line per refused field, each with the flag that set it
 * (`flags` maps field paths such as "spec.notAfter" to "--not-after"); else undefined.
 */
export function refusalOf(
  err: unknown,
  what: string,
  flags: Readonly<Record<string, string>>,
): CliError | undefined {
  if (!(err instanceof KubeApiError) || err.code !== 422) return undefined;
  const details = (err.status as { details?: { causes?: StatusCause[] } } | undefined)?.details;
  const causes = (details?.causes ?? []).filter((c) => c.field || c.message);
  if (causes.length === 0) return new CliError(`the API server refused ${what}: ${err.message}`);
  const lines = causes.map((c) => {
    const field = c.field ?? "";
    const flag = field ? flagOf(field, flags) : undefined;
    return `${field ? `${field}: ` : ""}${c.message ?? ""}${flag ? ` (${flag})` : ""}`;
  });
  return new CliError(`the API server refused ${what}: ${lines.join("; ")}`, { cause: err });
}
