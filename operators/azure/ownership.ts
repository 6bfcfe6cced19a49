/**
 * Ownership tags. Everything the operators create carries the owning HcpCluster's UID and name;
 * a resource that exists without our UID is someone else's, and is never adopted or deleted.
 *
 * The keys use "_" where a Kubernetes-style key would use "/": ARM refuses tag names holding
 * "<>%&\?/" (InvalidTagNameCharacters), so "hcp.aro.dev/owner" cannot be an Azure tag name.
 * Tag names are case-insensitive in ARM, so lookups ignore case. DNS record sets have no tags;
 * they carry the same keys in their `metadata`.
 */
import { AzureUserError, RESOURCE_OWNED_BY_ANOTHER } from "./errors.ts";

export const OWNER_TAG = "hcp.aro.dev_owner";
export const CLUSTER_TAG = "hcp.aro.dev_cluster";

export interface Owner {
  /** The HcpCluster's UID. */
  id: string;
  /** The HcpCluster's name (namespace/name or name), for people reading the Azure portal. */
  cluster: string;
}

export type Tags = Record<string, string> | undefined;

export function ownerTags(owner: Owner): Record<string, string> {
  return { [OWNER_TAG]: owner.id, [CLUSTER_TAG]: owner.cluster };
}

/** A tag's value, the key compared case-insensitively as ARM does. */
export function tagValue(tags: Tags, key: string): string | undefined {
  const k = key.toLowerCase();
  return Object.entries(tags ?? {}).find(([name]) => name.toLowerCase() === k)?.[1];
}

export function isOwnedBy(tags: Tags, owner: Owner): boolean {
  return tagValue(tags, OWNER_TAG) === owner.id;
}

/** Throws ResourceOwnedByAnother unless `tags` name `owner`. The other owner's UID is not shown. */
export function assertOwned(tags: Tags, owner: Owner, what: string): void {
  if (isOwnedBy(tags, owner)) return;
  const why =
    tagValue(tags, OWNER_TAG) === undefined
      ? "was not created by this service"
      : "belongs to another cluster";
  throw new AzureUserError({
    code: RESOURCE_OWNED_BY_ANOTHER,
    message: `${what} already exists and ${why}; it is neither adopted nor changed. Choose another name or remove it.`,
    operation: `ensure ${what}`,
  });
}

/** Whether `tags` already carry every owner tag with our values. */
export function hasOwnerTags(tags: Tags, owner: Owner): boolean {
  return Object.entries(ownerTags(owner)).every(([k, v]) => tagValue(tags, k) === v);
}

/** `existing` with our owner tags set (other tags kept, case variants of our keys replaced). */
export function withOwnerTags(existing: Tags, owner: Owner): Record<string, string> {
  const ours = ownerTags(owner);
  const keys = new Set(Object.keys(ours).map((k) => k.toLowerCase()));
  const kept = Object.entries(existing ?? {}).filter(([k]) => !keys.has(k.toLowerCase()));
  return { ...Object.fromEntries(kept), ...ours };
}
