/** The data forms of output (-o json|yaml|name), and the parsing of -o itself. */
import { dump } from "js-yaml";
import type { KubeObject } from "../api/meta/v1.ts";
import { CliError } from "./errors.ts";
import type { ResourceInfo } from "./resources.ts";

export type OutputFormat = "table" | "wide" | "json" | "yaml" | "name";

/** Parses -o for a command that takes the formats `allowed` ("table" is the default, never typed). */
export function parseOutput(value: string, allowed: readonly OutputFormat[]): OutputFormat {
  const typed = allowed.filter((f) => f !== "table");
  const found = typed.find((f) => f === value);
  if (!found) throw new CliError(`unknown output format "${value}": expected one of ${typed.join(", ")}`);
  return found;
}

export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function toYaml(value: unknown): string {
  return dump(value, { noRefs: true, lineWidth: -1 });
}

/** The object as kubectl prints it without --show-managed-fields. */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  const metadata = { ...obj.metadata };
  delete metadata.managedFields;
  return { ...obj, metadata };
}

/** `hcpcluster.hcp.aro.dev/demo`, kubectl's -o name. */
export function nameOf(info: ResourceInfo, obj: KubeObject): string {
  return `${info.singular}.${info.type.group}/${obj.metadata.name ?? ""}`;
}

/** Objects as data: one object when one was asked for by name, else a v1 List. */
export function printData(
  info: ResourceInfo,
  objects: readonly KubeObject[],
  format: "json" | "yaml" | "name",
  single: boolean,
): string {
  if (format === "name") return objects.map((o) => `${nameOf(info, o)}\n`).join("");
  const items = objects.map(withoutManagedFields);
  const doc =
    single && items.length === 1
      ? items[0]
      : { apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" }, items };
  return format === "json" ? toJson(doc) : toYaml(doc);
}
