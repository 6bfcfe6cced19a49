/**
 * What exists in the emulated subscription(s): resource groups and the resources in them, keyed by
 * ARM id compared case-insensitively (ARM ids are), each kept with the casing it was created with.
 */
import { cloudError, isObject, type ArmReply, type JsonObject } from "./http.ts";

export interface StoredResource {
  /** The ARM id in the casing it was created with. */
  id: string;
  name: string;
  /** e.g. Microsoft.Network/publicIPAddresses; record sets: Microsoft.Network/dnszones/A. */
  type: string;
  subscriptionId: string;
  resourceGroup: string;
  location?: string;
  tags: Record<string, string>;
  sku?: JsonObject;
  etag: string;
  /** The resource's `properties`, provisioningState included. */
  properties: JsonObject;
  /** The asynchronous operation running on the resource, if any. */
  operation?: RunningOperation;
}

export interface RunningOperation {
  id: string;
  kind: "put" | "delete";
  /** The headers of the reply that started it, sent again to a repeated DELETE. */
  headers: Record<string, string>;
}

/** What `ArmEmulator.resources()` returns: a snapshot of one resource. */
export interface ArmResourceRecord {
  id: string;
  name: string;
  type: string;
  subscriptionId: string;
  resourceGroup: string;
  location?: string;
  tags: Record<string, string>;
  provisioningState?: string;
  properties: JsonObject;
}

export const RESOURCE_GROUP_TYPE = "Microsoft.Resources/resourceGroups";
/** An extension resource at any scope (authorization.ts). */
export const ROLE_ASSIGNMENT_TYPE = "Microsoft.Authorization/roleAssignments";

export function groupId(subscriptionId: string, resourceGroup: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}`;
}

export function providerId(
  subscriptionId: string,
  resourceGroup: string,
  type: string,
  ...names: string[]
): string {
  return `${groupId(subscriptionId, resourceGroup)}/providers/${type}/${names.join("/")}`;
}

export class ResourceStore {
  readonly #items = new Map<string, StoredResource>();
  #etag = 0;

  get(id: string): StoredResource | undefined {
    return this.#items.get(id.toLowerCase());
  }

  put(resource: StoredResource): void {
    this.#items.set(resource.id.toLowerCase(), resource);
  }

  delete(id: string): void {
    this.#items.delete(id.toLowerCase());
  }

  newEtag(): string {
    return `W/"${(++this.#etag).toString(16).padStart(8, "0")}-emulator"`;
  }

  group(subscriptionId: string, resourceGroup: string): StoredResource | undefined {
    return this.get(groupId(subscriptionId, resourceGroup));
  }

  /** Everything under `parentId` (not the parent itself), in creation order. */
  under(parentId: string): StoredResource[] {
    const prefix = `${parentId.toLowerCase()}/`;
    return [...this.#items.entries()].filter(([key]) => key.startsWith(prefix)).map(([, r]) => r);
  }

  /** Resources of one type in a resource group. */
  ofType(subscriptionId: string, resourceGroup: string, type: string): StoredResource[] {
    const t = type.toLowerCase();
    return this.under(groupId(subscriptionId, resourceGroup)).filter((r) => r.type.toLowerCase() === t);
  }

  all(): StoredResource[] {
    return [...this.#items.values()];
  }

  groups(subscriptionId: string): StoredResource[] {
    const prefix = `/subscriptions/${subscriptionId}/`.toLowerCase();
    return this.all().filter((r) => r.type === RESOURCE_GROUP_TYPE && r.id.toLowerCase().startsWith(prefix));
  }
}

export function snapshot(r: StoredResource): ArmResourceRecord {
  const state = r.properties["provisioningState"];
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    subscriptionId: r.subscriptionId,
    resourceGroup: r.resourceGroup,
    ...(r.location !== undefined ? { location: r.location } : {}),
    tags: { ...r.tags },
    ...(typeof state === "string" ? { provisioningState: state } : {}),
    properties: structuredClone(r.properties),
  };
}

// Tag names may not hold these (ARM's InvalidTagNameCharacters), nor control characters.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const RESERVED_TAG_CHARACTERS = /[<>%&\\?/\u0000-\u001f\u007f]/;
const MAX_TAGS = 50;

/** Validates a `tags` value as ARM does; undefined means no tags. */
export function parseTags(value: unknown): { tags: Record<string, string> } | { error: ArmReply } {
  if (value === undefined || value === null) return { tags: {} };
  if (!isObject(value))
    return { error: cloudError(400, "InvalidRequestContent", "The tags must be an object.") };
  const tags: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") {
      return { error: cloudError(400, "InvalidRequestContent", `The value of tag '${k}' must be a string.`) };
    }
    tags[k] = v;
  }
  const bad = Object.keys(tags).filter((k) => RESERVED_TAG_CHARACTERS.test(k));
  if (bad.length > 0) {
    return {
      error: cloudError(
        400,
        "InvalidTagNameCharacters",
        `The tag names '${bad.join(",")}' have reserved characters '<,>,%,&,\\,?,/' or control characters.`,
      ),
    };
  }
  if (Object.keys(tags).length > MAX_TAGS) {
    return { error: cloudError(400, "InvalidTag", `A resource may have at most ${MAX_TAGS} tags.`) };
  }
  return { tags };
}

/** If-Match / If-None-Match as ARM applies them to PUT, PATCH and DELETE. */
export function preconditionFailed(
  existing: StoredResource | undefined,
  ifMatch: string | undefined,
  ifNoneMatch: string | undefined,
): ArmReply | undefined {
  if (ifNoneMatch === "*" && existing) {
    return cloudError(412, "PreconditionFailed", "The resource already exists (If-None-Match: *).");
  }
  if (ifMatch !== undefined && ifMatch !== "*" && existing?.etag !== ifMatch) {
    return cloudError(412, "PreconditionFailed", "The etag in If-Match does not match the resource's etag.");
  }
  if (ifMatch === "*" && !existing) {
    return cloudError(412, "PreconditionFailed", "The resource does not exist (If-Match: *).");
  }
  return undefined;
}
