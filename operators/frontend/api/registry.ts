/**
 * The api-versions served, oldest first. Adding one is a folder beside these (its schemas and its
 * conversion to and from the internal model) and a line here.
 */
import type { InternalKind } from "./internal.ts";
import type { ObjectSchema, Properties } from "./schema.ts";
import { v2024_06_10_preview } from "./v2024-06-10-preview/index.ts";
import { v2025_12_23_preview } from "./v2025-12-23-preview/index.ts";
import { v2026_06_30_preview } from "./v2026-06-30-preview/index.ts";
import { v2026_09_01_preview } from "./v2026-09-01-preview/index.ts";
import type { ApiVersionDefinition } from "./version.ts";

const VERSIONS = [
  v2024_06_10_preview,
  v2025_12_23_preview,
  v2026_06_30_preview,
  v2026_09_01_preview,
] as const;

export type ApiVersion = (typeof VERSIONS)[number]["name"];
export const API_VERSIONS: readonly ApiVersion[] = VERSIONS.map((v) => v.name);

/** The subscription lifecycle's api-version (ARM's, not the resource provider's). */
export const SUBSCRIPTION_API_VERSION = "2.0";

export function isServedVersion(v: string | undefined): v is ApiVersion {
  return API_VERSIONS.some((served) => served === v);
}

const BY_NAME = new Map<string, ApiVersionDefinition>(VERSIONS.map((v) => [v.name, v]));

export function versionOf(version: ApiVersion): ApiVersionDefinition {
  const found = BY_NAME.get(version);
  if (!found) throw new Error(`api-version ${version} is not registered`);
  return found;
}

/** What a body of `kind` looks like in `version`. */
export function schemaFor(version: ApiVersion, kind: InternalKind): ObjectSchema<Properties, string> {
  return versionOf(version).schemas[kind];
}

/** Every version's schemas, by version (the field table and the tests walk them all). */
export const SCHEMAS = Object.fromEntries(VERSIONS.map((v) => [v.name, v.schemas])) as {
  [V in (typeof VERSIONS)[number] as V["name"]]: V["schemas"];
};

/** The versions whose requestAdminCredential takes the client's own certificate signing request. */
export const CSR_VERSIONS: readonly ApiVersion[] = VERSIONS.filter((v) => v.acceptsCredentialCsr).map(
  (v) => v.name,
);
