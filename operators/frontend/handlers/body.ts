/**
 * A PUT's or PATCH's body made into the resource to store: its properties in the internal model
 * (on an update with what the request's api-version cannot see kept from the stored resource; on
 * a create with the service's defaults), checked once, first the preview features, then what the
 * resource's kind checks (cluster.ts, node-pool.ts, external-auth.ts).
 */
import type { ArmRequest } from "../arm-request.ts";
import type { JsonObject } from "../api/json.ts";
import { carryHidden, toInternalProperties, toVersioned, type VersionedBody } from "../api/conversion.ts";
import { withInternalDefaults, type InternalResource, type InternalProperties } from "../api/internal.ts";
import { checkPreviewFeatures } from "../checks/preview-features.ts";
import { formatResourceId, resourceName, resourceType, type ResourceId } from "../resource-id.ts";
import type { ResourceDeps } from "./deps.ts";
import type { Target } from "./target.ts";
import type { ArmCR } from "../mapping/common.ts";

/** A create or update as its kind's checks see it. */
export interface BodyChange {
  id: ResourceId;
  doc: VersionedBody;
  properties: InternalProperties;
  /** The resource before the change; undefined on a create. */
  stored: InternalResource | undefined;
}

/** What one resource kind adds to the shared PUT, PATCH and DELETE flow (resources.ts). */
export interface KindRules {
  /** The service's defaults for a new resource, beyond its schema's. */
  createDefaults?: (id: ResourceId, properties: InternalProperties) => InternalProperties;
  /** Checks of the body against the service's state and the customer's Azure, in order. */
  checkBody: (deps: ResourceDeps, change: BodyChange) => Promise<void>;
  /** Before a create is read: what else under the parent refuses it. */
  checkCreate?: (deps: ResourceDeps, t: Target) => Promise<void>;
  /** The resource against its parent cluster, once built. */
  checkWithParent?: (
    parent: ArmCR | undefined,
    resource: InternalResource,
    isNew: boolean,
  ) => InternalResource;
  /** After a delete's operation is stored, before the CR goes. */
  beforeDelete?: (deps: ResourceDeps, t: Target) => Promise<void>;
}

/** The systemData to store: the stored one overlaid with this request's header. */
function systemDataOf(req: ArmRequest, stored: JsonObject | undefined): JsonObject | undefined {
  if (!req.systemData) return stored;
  return {
    ...(stored ?? {}),
    ...req.systemData,
    ...(stored?.["createdAt"] ? { createdAt: stored["createdAt"] } : {}),
  };
}

/** What a PUT or PATCH sent, and the resource it changes (undefined on a create). */
export interface BodyInput {
  id: ResourceId;
  doc: VersionedBody;
  stored: InternalResource | undefined;
}

function internalProperties(
  rules: KindRules,
  req: ArmRequest,
  { id, doc, stored }: BodyInput,
): InternalProperties {
  const properties = toInternalProperties(doc, req.apiVersion, id.kind);
  if (stored) {
    const seen = toInternalProperties(toVersioned(stored, req.apiVersion, id.kind), req.apiVersion, id.kind);
    return carryHidden(stored.properties, seen, properties);
  }
  const created = withInternalDefaults(properties, id.kind);
  return rules.createDefaults ? rules.createDefaults(id, created) : created;
}

const channelGroupOf = (p: InternalProperties): string | undefined =>
  "version" in p ? p.version?.channelGroup : undefined;

/** Preview features the request asks for must be registered on its subscription. */
function checkGated(req: ArmRequest, change: BodyChange): void {
  const { id, doc, properties, stored } = change;
  checkPreviewFeatures(req.subscription, {
    kind: id.kind,
    channelGroup: channelGroupOf(properties),
    tags: doc.tags,
    ...(stored ? { stored: { channelGroup: channelGroupOf(stored.properties), tags: stored.tags } } : {}),
  });
}

/** The internal resource of a versioned body, checked once. */
export async function toInternal(
  deps: ResourceDeps,
  rules: KindRules,
  req: ArmRequest,
  input: BodyInput,
): Promise<InternalResource> {
  const { id, doc, stored } = input;
  const change = { ...input, properties: internalProperties(rules, req, input) };
  checkGated(req, change);
  await rules.checkBody(deps, change);
  const systemData = systemDataOf(req, stored?.systemData);
  return {
    id: stored?.id ?? formatResourceId(id),
    name: resourceName(id),
    type: resourceType(id.kind),
    location: stored?.location ?? doc.location ?? "",
    ...(doc.tags ? { tags: doc.tags } : {}),
    ...(doc.identity ? { identity: doc.identity } : {}),
    ...(systemData ? { systemData } : {}),
    properties: change.properties,
  };
}
