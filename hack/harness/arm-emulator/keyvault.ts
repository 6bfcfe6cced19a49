/**
 * Microsoft.KeyVault's management plane: vaults (PUT, GET, DELETE, list in a resource group and in
 * a subscription; answered at once; names unique across Azure) and their keys
 * (`vaults/{v}/keys/{k}`: PUT creates a key with its first version and leaves an existing one as
 * it is, as the provider's createIfNotExist does; GET shows the current version; `versions` and
 * `versions/{version}` list and read each version). A vault authorizes by Azure RBAC unless
 * `enableRbacAuthorization` is false, when its `accessPolicies` do.
 */
import { randomBytes } from "node:crypto";
import { isReply, requireGroup, resourceNotFound, type Target } from "./context.ts";
import { asArray, asObject, asString, cloudError, ok, type ArmReply, type JsonObject } from "./http.ts";
import { methodNotAllowed } from "./resourcegroups.ts";
import type { StoredResource } from "./store.ts";
import { findSync, synchronous, type SyncKind } from "./synchronous.ts";

export const VAULT_TYPE = "Microsoft.KeyVault/vaults";
export const KEY_TYPE = "Microsoft.KeyVault/vaults/keys";
export const KEY_VERSION_TYPE = "Microsoft.KeyVault/vaults/keys/versions";

const VAULT_NAME = /^[a-zA-Z](?!.*--)[a-zA-Z0-9-]{1,22}[a-zA-Z0-9]$/;
const KEY_NAME = /^[a-zA-Z0-9-]{1,127}$/;
const KEY_TYPES = ["RSA", "RSA-HSM", "EC", "EC-HSM"];

export const vaultKind: SyncKind = {
  type: VAULT_TYPE,
  invalidName(name) {
    if (VAULT_NAME.test(name)) return undefined;
    return cloudError(
      400,
      "VaultNameNotValid",
      `The vault name '${name}' is invalid. A vault's name must be between 3-24 alphanumeric characters. The name must begin with a letter, end with a letter or digit, and not contain consecutive hyphens.`,
    );
  },
  build(t, { id, name, body }) {
    const props = asObject(body["properties"]);
    const tenantId = asString(props["tenantId"]);
    const sku = asObject(props["sku"]);
    if (!tenantId) return cloudError(400, "BadRequest", "The parameter properties.tenantId is required.");
    if (!asString(sku["name"]))
      return cloudError(400, "BadRequest", "The parameter properties.sku.name is required.");
    const taken = t.ctx.store
      .everyOfType(VAULT_TYPE)
      .find((r) => r.name.toLowerCase() === name.toLowerCase() && r.id.toLowerCase() !== id.toLowerCase());
    if (taken)
      return cloudError(
        409,
        "VaultAlreadyExists",
        `The vault name '${name}' is already in use. Vault names are globally unique so it is possible that the name is already taken.`,
      );
    return {
      enableSoftDelete: true,
      softDeleteRetentionInDays: 90,
      publicNetworkAccess: "Enabled",
      ...props,
      sku: { family: asString(sku["family"]) ?? "A", name: asString(sku["name"]) ?? "standard" },
      enableRbacAuthorization: props["enableRbacAuthorization"] !== false,
      accessPolicies: asArray(props["accessPolicies"]),
      vaultUri: `https://${name.toLowerCase()}.vault.azure.net/`,
    };
  },
};

/** .../providers/Microsoft.KeyVault/vaults[/{vault}[/keys[/{key}[/versions[/{version}]]]]] */
export function keyVault(t: Target, name: string | undefined, rest: string[]): ArmReply {
  if (rest.length === 0 || name === undefined) return synchronous(t, vaultKind, name);
  const group = requireGroup(t, t.req.method !== "GET");
  if (isReply(group)) return group;
  const [keys, keyName, versions, version, ...more] = rest;
  const shape =
    keys?.toLowerCase() === "keys" && (versions === undefined || versions.toLowerCase() === "versions");
  if (!shape || more.length > 0)
    return cloudError(404, "NotFound", `No route for ${t.req.method} ${t.req.path}.`);
  const vault = findSync(t, vaultKind, name);
  if (!vault) return resourceNotFound(VAULT_TYPE, name, t.resourceGroup);
  if (keyName === undefined) return listKeys(t, vault);
  if (versions === undefined) return key(t, vault, keyName);
  return keyVersions(t, vault, keyName, version);
}

function listKeys(t: Target, vault: StoredResource): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  return ok({ value: children(t, vault.id, KEY_TYPE).map(renderKey(t)) });
}

/** .../keys/{key}/versions[/{version}] */
function keyVersions(
  t: Target,
  vault: StoredResource,
  keyName: string,
  version: string | undefined,
): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  const k = t.ctx.store.get(`${vault.id}/keys/${keyName}`);
  if (!k) return resourceNotFound(KEY_TYPE, `${vault.name}/${keyName}`, t.resourceGroup);
  if (version === undefined)
    return ok({ value: children(t, k.id, KEY_VERSION_TYPE).map(renderVersion(vault)) });
  const v = t.ctx.store.get(`${k.id}/versions/${version}`);
  if (!v) return resourceNotFound(KEY_VERSION_TYPE, `${vault.name}/${keyName}/${version}`, t.resourceGroup);
  return ok(renderVersion(vault)(v));
}

function key(t: Target, vault: StoredResource, name: string): ArmReply {
  const id = `${vault.id}/keys/${name}`;
  const existing = t.ctx.store.get(id);
  if (t.req.method === "GET")
    return existing
      ? ok(renderKey(t)(existing))
      : resourceNotFound(KEY_TYPE, `${vault.name}/${name}`, t.resourceGroup);
  if (t.req.method !== "PUT") return methodNotAllowed(t.req.method);
  if (existing) return ok(renderKey(t)(existing));
  if (!KEY_NAME.test(name))
    return cloudError(
      400,
      "BadRequest",
      `The key name '${name}' is invalid: 1-127 letters, digits and hyphens.`,
    );
  const props = asObject(asObject(t.req.body)["properties"]);
  const kty = asString(props["kty"]) ?? "RSA";
  if (!KEY_TYPES.includes(kty))
    return cloudError(400, "BadRequest", `The key type '${kty}' is not one of ${KEY_TYPES.join(", ")}.`);
  const now = Math.floor(Date.now() / 1000);
  const attributes = {
    enabled: asObject(props["attributes"])["enabled"] !== false,
    created: now,
    updated: now,
    recoveryLevel: "Recoverable+Purgeable",
  };
  const keyProps: JsonObject = {
    kty,
    ...(kty.startsWith("RSA")
      ? { keySize: typeof props["keySize"] === "number" ? props["keySize"] : 2048 }
      : {}),
    keyOps:
      asArray(props["keyOps"]).length > 0
        ? asArray(props["keyOps"])
        : ["encrypt", "decrypt", "wrapKey", "unwrapKey", "sign", "verify"],
    attributes,
  };
  const version = randomBytes(16).toString("hex");
  const stored = (
    type: string,
    resourceId: string,
    resourceName: string,
    properties: JsonObject,
  ): StoredResource => ({
    id: resourceId,
    name: resourceName,
    type,
    subscriptionId: t.subscriptionId,
    resourceGroup: vault.resourceGroup,
    ...(vault.location !== undefined ? { location: vault.location } : {}),
    tags: {},
    etag: t.ctx.store.newEtag(),
    properties,
  });
  t.ctx.store.put(stored(KEY_TYPE, id, name, { ...keyProps, currentVersion: version }));
  t.ctx.store.put(stored(KEY_VERSION_TYPE, `${id}/versions/${version}`, version, keyProps));
  return ok(renderKey(t)(t.ctx.store.get(id) as StoredResource));
}

function children(t: Target, parentId: string, type: string): StoredResource[] {
  const depth = parentId.split("/").length + 2;
  return t.ctx.store.under(parentId).filter((r) => r.type === type && r.id.split("/").length === depth);
}

function keyUri(vault: StoredResource, keyName: string): string {
  return `${asString(vault.properties["vaultUri"]) ?? ""}keys/${keyName}`;
}

function renderKey(t: Target) {
  return (k: StoredResource): JsonObject => {
    const vaultId = k.id.slice(0, k.id.toLowerCase().lastIndexOf("/keys/"));
    const vault = t.ctx.store.get(vaultId);
    const { currentVersion, ...props } = k.properties;
    const uri = vault ? keyUri(vault, k.name) : "";
    return {
      id: k.id,
      name: k.name,
      type: KEY_TYPE,
      location: k.location ?? "",
      tags: k.tags,
      properties: { ...props, keyUri: uri, keyUriWithVersion: `${uri}/${asString(currentVersion) ?? ""}` },
    };
  };
}

function renderVersion(vault: StoredResource) {
  return (v: StoredResource): JsonObject => {
    const keyName = v.id.split("/").at(-3) ?? "";
    const uri = keyUri(vault, keyName);
    return {
      id: v.id,
      name: v.name,
      type: KEY_VERSION_TYPE,
      location: v.location ?? "",
      tags: v.tags,
      properties: { ...v.properties, keyUri: uri, keyUriWithVersion: `${uri}/${v.name}` },
    };
  };
}

/** /subscriptions/{s}/providers/Microsoft.KeyVault/vaults: every vault of the subscription. */
export function subscriptionVaults(t: Omit<Target, "resourceGroup">): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  const prefix = `/subscriptions/${t.subscriptionId}/`.toLowerCase();
  const vaults = t.ctx.store.everyOfType(VAULT_TYPE).filter((r) => r.id.toLowerCase().startsWith(prefix));
  return ok({
    value: vaults.map((r) => ({
      id: r.id,
      name: r.name,
      type: VAULT_TYPE,
      location: r.location ?? "",
      tags: r.tags,
      properties: r.properties,
    })),
  });
}
