/**
 * What every api-version's bodies share: ARM's resource envelope (a TrackedResource with a
 * managed identity, or a ProxyResource), the status conditions, and the string rules several
 * fields use. Version folders build their schemas from these.
 */
import {
  anyValue,
  arr,
  map,
  obj,
  ro,
  str,
  type ObjectSchema,
  type Properties,
  type TypeOf,
} from "./schema.ts";

export const condition = obj({
  type: str(),
  status: str(),
  lastTransitionTime: str(),
  reason: str(),
  message: str(),
});

/** `status.conditions`: Available, Degraded and Progressing, read-only. */
export const statusConditions = ro(obj({ conditions: arr(condition, { maxItems: 10 }) }));

export const keyText = str({ minLength: 1, maxLength: 255 });
export const claimText = str({ minLength: 1, maxLength: 256 });
/** An Azure resource ID: the same resource in any casing. */
export const armId = str({ caseInsensitive: true });

/** ManagedServiceIdentity: what a request sends of an assigned identity is its ID, the key. */
export const identity = obj({
  type: str({ enum: ["None", "SystemAssigned", "UserAssigned", "SystemAssigned,UserAssigned"] }),
  userAssignedIdentities: map(obj({ principalId: ro(str()), clientId: ro(str()) })),
  principalId: ro(str()),
  tenantId: ro(str()),
});

/** An Azure region, as its name ("eastus") or display name ("East US"); never blank. */
const LOCATION = /^[A-Za-z0-9]+( [A-Za-z0-9]+)*$/;
const LOCATION_TEXT = "is not an Azure location such as 'eastus' or 'East US'";
/** ARM's tag name rules: at most 512 characters, none of < > % & \ ? / (values: 256, 50 tags). */
const TAG_NAME = {
  maxLength: 512,
  forbidden: /[<>%&\\?/]|^$/,
  forbiddenText: "is empty or contains one of the characters < > % & \\ ? /",
};

const trackedFields = {
  id: ro(str()),
  name: ro(str()),
  type: ro(str()),
  location: { ...str({ pattern: LOCATION, patternText: LOCATION_TEXT, maxLength: 64 }), createOnly: true },
  tags: map(str({ maxLength: 256 }), { maxProperties: 50, keys: TAG_NAME }),
  systemData: ro(anyValue()),
  identity,
};

/** A TrackedResource (a cluster, a node pool): location, tags, identity and `properties`. */
export function trackedResource<P extends ObjectSchema<Properties, string>>(
  properties: P,
): ObjectSchema<typeof trackedFields & { properties: P }, "location" | "properties"> {
  return obj({ ...trackedFields, properties }, { required: ["location", "properties"] });
}

const proxyFields = { id: ro(str()), name: ro(str()), type: ro(str()), systemData: ro(anyValue()) };

/** A ProxyResource (an external auth): no location, tags or identity. */
export function proxyResource<P extends ObjectSchema<Properties, string>>(
  properties: P,
): ObjectSchema<typeof proxyFields & { properties: P }, "properties"> {
  return obj({ ...proxyFields, properties }, { required: ["properties"] });
}

/** A resource's managed identity block, as a request sends it. */
export type Identity = TypeOf<typeof identity>;
