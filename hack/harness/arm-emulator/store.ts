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

/**
 * Indexed so that each request's cost does not grow with the resources held: a region of 10,000
 * clusters keeps about 100,000 here, and a scan per request made the stand-in, not the design, the
 * thing a large bench measured.
 */
export class ResourceStore {
  readonly #items = new Map<string, StoredResource>();
  /** Every ancestor id (lowercased) → the keys under it, in creation order. */
  readonly #children = new Map<string, Set<string>>();
  /** Type (lowercased) → the keys of that type. */
  readonly #byType = new Map<string, Set<string>>();
  /** A referenced id (a public IP, a subnet) → the load balancer frontends that name it, by owner key. */
  readonly #frontendsNaming = new Map<string, Map<string, JsonObject[]>>();
  /** Owner key → the ids its frontends name, to drop them when it changes or goes. */
  readonly #namedBy = new Map<string, string[]>();
  #etag = 0;

  get(id: string): StoredResource | undefined {
    return this.#items.get(id.toLowerCase());
  }

  put(resource: StoredResource): void {
    const key = resource.id.toLowerCase();
    const known = this.#items.has(key);
    if (known) this.#unindexFrontends(key);
    this.#items.set(key, resource);
    if (!known) {
      for (const ancestor of ancestorsOf(key)) indexed(this.#children, ancestor).add(key);
      indexed(this.#byType, resource.type.toLowerCase()).add(key);
    }
    this.#indexFrontends(key, resource);
  }

  delete(id: string): void {
    const key = id.toLowerCase();
    const r = this.#items.get(key);
    if (!r) return;
    this.#items.delete(key);
    for (const ancestor of ancestorsOf(key)) unindexed(this.#children, ancestor, key);
    unindexed(this.#byType, r.type.toLowerCase(), key);
    this.#unindexFrontends(key);
  }

  newEtag(): string {
    return `W/"${(++this.#etag).toString(16).padStart(8, "0")}-emulator"`;
  }

  group(subscriptionId: string, resourceGroup: string): StoredResource | undefined {
    return this.get(groupId(subscriptionId, resourceGroup));
  }

  /** Everything under `parentId` (not the parent itself), in creation order. */
  under(parentId: string): StoredResource[] {
    return this.#resolve(this.#children.get(parentId.toLowerCase()));
  }

  /** Resources of one type in a resource group. */
  ofType(subscriptionId: string, resourceGroup: string, type: string): StoredResource[] {
    const t = type.toLowerCase();
    return this.under(groupId(subscriptionId, resourceGroup)).filter((r) => r.type.toLowerCase() === t);
  }

  /** Resources of one type wherever they are. */
  everyOfType(type: string): StoredResource[] {
    return this.#resolve(this.#byType.get(type.toLowerCase()));
  }

  /**
   * The load balancer frontends (each with its owner) whose public IP or subnet is `id`: kept as
   * the owner was stored, which is when a load balancer's frontends are decided.
   */
  frontendsNaming(id: string): Array<{ owner: StoredResource; frontend: JsonObject }> {
    const out: Array<{ owner: StoredResource; frontend: JsonObject }> = [];
    for (const [ownerKey, frontends] of this.#frontendsNaming.get(id.toLowerCase()) ?? []) {
      const owner = this.#items.get(ownerKey);
      if (owner) for (const frontend of frontends) out.push({ owner, frontend });
    }
    return out;
  }

  all(): StoredResource[] {
    return [...this.#items.values()];
  }

  groups(subscriptionId: string): StoredResource[] {
    const prefix = `/subscriptions/${subscriptionId}/`.toLowerCase();
    return this.everyOfType(RESOURCE_GROUP_TYPE).filter((r) => r.id.toLowerCase().startsWith(prefix));
  }

  #resolve(keys: Set<string> | undefined): StoredResource[] {
    const out: StoredResource[] = [];
    for (const key of keys ?? []) {
      const r = this.#items.get(key);
      if (r) out.push(r);
    }
    return out;
  }

  #indexFrontends(key: string, r: StoredResource): void {
    const frontends = r.properties["frontendIPConfigurations"];
    if (!Array.isArray(frontends)) return;
    const named: string[] = [];
    for (const fe of frontends) {
      if (!isObject(fe)) continue;
      const props = isObject(fe["properties"]) ? fe["properties"] : {};
      for (const ref of [props["publicIPAddress"], props["subnet"]]) {
        const target = isObject(ref) && typeof ref["id"] === "string" ? ref["id"].toLowerCase() : undefined;
        if (target === undefined) continue;
        const byOwner = this.#frontendsNaming.get(target) ?? new Map<string, JsonObject[]>();
        this.#frontendsNaming.set(target, byOwner);
        byOwner.set(key, [...(byOwner.get(key) ?? []), fe]);
        named.push(target);
      }
    }
    if (named.length > 0) this.#namedBy.set(key, named);
  }

  #unindexFrontends(key: string): void {
    for (const target of this.#namedBy.get(key) ?? []) {
      const byOwner = this.#frontendsNaming.get(target);
      byOwner?.delete(key);
      if (byOwner?.size === 0) this.#frontendsNaming.delete(target);
    }
    this.#namedBy.delete(key);
  }
}

/** "/a/b/c" → "/a", "/a/b" (the id's own key is not its ancestor). */
function ancestorsOf(key: string): string[] {
  const out: string[] = [];
  for (let i = key.indexOf("/", 1); i > 0; i = key.indexOf("/", i + 1)) out.push(key.slice(0, i));
  return out;
}

function indexed(index: Map<string, Set<string>>, at: string): Set<string> {
  let keys = index.get(at);
  if (!keys) index.set(at, (keys = new Set()));
  return keys;
}

function unindexed(index: Map<string, Set<string>>, at: string, key: string): void {
  const keys = index.get(at);
  keys?.delete(key);
  if (keys?.size === 0) index.delete(at);
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
