/**
 * A PUT's or PATCH's body made into the resource to store: its properties in the internal model
 * (on an update with what the request's api-version cannot see kept from the stored resource; on
 * a create with the service's defaults), checked once, first the preview features, then what the
 * resource's kind checks (cluster.ts, node-pool.ts, external-auth.ts).
 */
import type { ArmRequest } from "../arm-request.ts";
import type { JsonObject } from "../api/json.ts";
import { carryHidden, toInternalProperties, toVersioned, type VersionedBody } from "../api/conversion.ts";
import {
  withInternalDefaults,
  type InternalKind,
  type InternalProperties,
  type InternalResource,
  type PropertiesOf,
} from "../api/internal.ts";
import { checkPreviewFeatures } from "../checks/preview-features.ts";
import { formatResourceId, resourceName, resourceType, type ResourceId } from "../resource-id.ts";
import type { ResourceDeps } from "./deps.ts";
import type { Target } from "./target.ts";
import type { ArmCR } from "../mapping/common.ts";

/** A create or update of a `K` as its kind's checks see it. */
export interface BodyChange<K extends InternalKind> {
  id: ResourceId;
  doc: VersionedBody;
  properties: PropertiesOf[K];
  /** The resource before the change; undefined on a create. */
  stored: InternalResource<PropertiesOf[K]> | undefined;
}

/** What one resource kind adds to the shared PUT, PATCH and DELETE flow (resources.ts). */
export interface KindRules<K extends InternalKind> {
  /** The service's defaults for a new resource, beyond its schema's. */
  createDefaults?: (id: ResourceId, properties: PropertiesOf[K]) => PropertiesOf[K];
  /** Checks of the body against the service's state and the customer's Azure, in order. */
  checkBody: (deps: ResourceDeps, change: BodyChange<K>) => Promise<void>;
  /** Before a create is read: what else under the parent refuses it. */
  checkCreate?: (deps: ResourceDeps, t: Target) => Promise<void>;
  /** The resource against its parent cluster, once built. */
  checkWithParent?: (
    parent: ArmCR | undefined,
    resource: InternalResource<PropertiesOf[K]>,
    isNew: boolean,
  ) => InternalResource<PropertiesOf[K]>;
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

/** What a PUT or PATCH of a `K` sent, and the resource it changes (undefined on a create). */
export interface BodyInput<K extends InternalKind> {
  kind: K;
  id: ResourceId;
  doc: VersionedBody;
  stored: InternalResource<PropertiesOf[K]> | undefined;
}

function internalProperties<K extends InternalKind>(
  rules: KindRules<K>,
  req: ArmRequest,
  { kind, id, doc, stored }: BodyInput<K>,
): PropertiesOf[K] {
  const properties = toInternalProperties(doc, req.apiVersion, kind);
  if (stored) {
    const seen = toInternalProperties(toVersioned(stored, req.apiVersion, kind), req.apiVersion, kind);
    return carryHidden(stored.properties, seen, properties);
  }
  const created = withInternalDefaults(properties, kind);
  return rules.createDefaults ? rules.createDefaults(id, created) : created;
}

const channelGroupOf = (p: InternalProperties): string | undefined => p.version?.channelGroup;

/** Preview features the request asks for must be registered on its subscription. */
function checkGated<K extends InternalKind>(req: ArmRequest, change: BodyChange<K>): void {
  const { id, doc, properties, stored } = change;
  checkPreviewFeatures(req.subscription, {
    kind: id.kind,
    channelGroup: channelGroupOf(properties),
    tags: doc.tags,
    ...(stored ? { stored: { channelGroup: channelGroupOf(stored.properties), tags: stored.tags } } : {}),
  });
}

/** The internal resource of a versioned body, checked once. */
export async function toInternal<K extends InternalKind>(
  deps: ResourceDeps,
  rules: KindRules<K>,
  req: ArmRequest,
  input: BodyInput<K>,
): Promise<InternalResource<PropertiesOf[K]>> {
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
