/**
 * Versioned ARM bodies ⇄ hub resources: what a request in one API version means for the stored
 * resource, and what a stored resource looks like in one API version. Fields a version does not
 * know survive its updates (a 2024-06-10-preview PATCH keeps a cluster's ingress settings).
 */
import {
  HUB_VERSION,
  SCHEMAS,
  type ApiVersion,
  type ClusterBody,
  type ClusterProperties,
  type ClusterSchema,
  type ExternalAuthBody,
  type ExternalAuthProperties,
  type ExternalAuthSchema,
  type NodePoolBody,
  type NodePoolProperties,
  type NodePoolSchema,
} from "./api-version-schemas.ts";
import { applyDefaults, isObject, project, setOwn, type JsonObject } from "./body-schema.ts";
import type { ResourceKind } from "./resource-id.ts";

export type HubProperties = ClusterProperties | NodePoolProperties | ExternalAuthProperties;
/** A request or response body of one API version. */
export type VersionedBody = ClusterBody | NodePoolBody | ExternalAuthBody;

/** An ARM resource in the hub version's shape. */
export interface ArmResource<P extends HubProperties = HubProperties> {
  id: string;
  name: string;
  type: string;
  location: string;
  tags?: Record<string, string>;
  systemData?: JsonObject;
  identity?: JsonObject;
  properties: P;
}

export function schemaFor(
  version: ApiVersion,
  kind: ResourceKind,
): ClusterSchema | NodePoolSchema | ExternalAuthSchema {
  return SCHEMAS[version][kind];
}

/**
 * An external auth's read-only state before 2026-06-30-preview: one `condition`, the hub's
 * Available one (its other fields are the same in every version).
 */
function externalAuthFromHub(version: ApiVersion, p: ExternalAuthProperties): ExternalAuthProperties {
  if (version === "2026-06-30-preview" || version === "2026-09-01-preview") return p;
  const { status, ...rest } = p;
  const available = status?.conditions?.find((c) => c.type === "Available");
  return available ? { ...rest, condition: available } : rest;
}

/** 2024-06-10-preview kept the vault name inside activeKey; later versions moved it up to kms. */
function vaultNameToHub(p: ClusterProperties): ClusterProperties {
  const out = structuredClone(p);
  const kms = out.etcd?.dataEncryption?.customerManaged?.kms;
  const vaultName = kms?.activeKey?.vaultName;
  if (kms?.activeKey === undefined || vaultName === undefined) return out;
  kms.vaultName = vaultName;
  delete kms.activeKey.vaultName;
  return out;
}

function vaultNameFromHub(p: ClusterProperties): ClusterProperties {
  const out = structuredClone(p);
  const kms = out.etcd?.dataEncryption?.customerManaged?.kms;
  if (kms?.vaultName === undefined) return out;
  kms.activeKey = { ...(kms.activeKey ?? {}), vaultName: kms.vaultName };
  delete kms.vaultName;
  return out;
}

/**
 * How each version's cluster properties differ in shape from the hub's (node pools do not); fields
 * a version lacks are left out by its schema and kept by `carryHidden`.
 */
const CLUSTER_CONVERSIONS: Record<
  ApiVersion,
  { toHub(p: ClusterProperties): ClusterProperties; fromHub(p: ClusterProperties): ClusterProperties }
> = {
  "2024-06-10-preview": { toHub: vaultNameToHub, fromHub: vaultNameFromHub },
  "2025-12-23-preview": { toHub: (p) => p, fromHub: (p) => p },
  "2026-06-30-preview": { toHub: (p) => p, fromHub: (p) => p },
  "2026-09-01-preview": { toHub: (p) => p, fromHub: (p) => p },
};

/** A hub resource as one API version shows it. */
export function toVersioned(res: ArmResource, version: ApiVersion, kind: ResourceKind): VersionedBody {
  const properties =
    kind === "cluster"
      ? CLUSTER_CONVERSIONS[version].fromHub(res.properties)
      : kind === "externalAuth"
        ? externalAuthFromHub(version, res.properties as ExternalAuthProperties)
        : res.properties;
  return project(schemaFor(version, kind), { ...res, properties }) ?? {};
}

/** The properties of a versioned body in the hub's shape. */
export function propertiesToHub(doc: VersionedBody, version: ApiVersion, kind: ResourceKind): HubProperties {
  const p = doc.properties ?? {};
  return kind === "cluster" ? CLUSTER_CONVERSIONS[version].toHub(p) : p;
}

/**
 * A new resource's properties with the hub's defaults of fields its request's version does not
 * know (a cluster's ingress.type and cryptoRestrictions, a node pool's osDisk.diskType): ARO HCP
 * builds every new resource on its internal model's defaults, so a cluster created through
 * 2024-06-10-preview shows ingress.type Public in 2026-06-30-preview, as one created there does.
 */
export function withHubDefaults(p: HubProperties, kind: ResourceKind): HubProperties {
  // The envelope's other fields have no defaults; the hub's defaults keep hub properties hub properties.
  const doc: { properties?: HubProperties } | undefined = applyDefaults(schemaFor(HUB_VERSION, kind), {
    properties: p,
  });
  return doc?.properties ?? p;
}

/** An own field's value: a key such as "constructor" must not find Object.prototype's. */
const own = (o: JsonObject, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);

function carry(old: unknown, seen: unknown, next: unknown): unknown {
  if (!isObject(old)) return next;
  const out: JsonObject = isObject(next) ? { ...next } : {};
  const visible = isObject(seen) ? seen : {};
  for (const [key, value] of Object.entries(old)) {
    const shown = own(visible, key);
    const sent = own(out, key);
    if (shown === undefined) {
      if (sent === undefined) setOwn(out, key, value);
    } else if (isObject(value) && isObject(sent)) {
      setOwn(out, key, carry(value, shown, sent));
    }
  }
  return out;
}

/**
 * Keeps what `old` holds that the request's version could not see (`seen`: old as that version
 * shows it, converted back) in `next`.
 */
export function carryHidden(old: HubProperties, seen: HubProperties, next: HubProperties): HubProperties {
  // Every field comes from `old` or `next`: hub properties.
  return carry(old, seen, next) as HubProperties;
}
