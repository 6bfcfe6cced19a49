/**
 * The frontend's view of the service cluster: typed reads and writes of HcpClusters, NodePools, ExternalAuths,
 * operation ConfigMaps and subscription namespaces through the shared KubeClient, a server-side
 * dry run (for preflight), and the API server's refusals turned into CloudErrors: a 422 from the
 * schema or a CEL rule becomes a 400 naming the ARM field.
 */
import { ConfigMapResource, NamespaceResource } from "../api/core.ts";
import {
  DNS_PREFIX_FIELD,
  ExternalAuthResource,
  HcpClusterResource,
  NodePoolResource,
} from "../api/v1alpha1/index.ts";
import { KubeApiError, type KubeClient, type KubeObject, type ResourceType } from "../runtime/kube.ts";
import { CloudError, CODES, conflict, fieldErrors, type FieldError } from "./errors.ts";
import type { ResourceKind } from "./resource-id.ts";
import { isObject, shorten, text } from "./api/json.ts";
import { armFieldPath } from "./mapping/field-paths.ts";

export const namespaceType: ResourceType = NamespaceResource;
export const configMapType: ResourceType = ConfigMapResource;

const CR_TYPES: Record<ResourceKind, ResourceType> = {
  cluster: HcpClusterResource,
  nodePool: NodePoolResource,
  externalAuth: ExternalAuthResource,
};

export const crType = (kind: ResourceKind): ResourceType => CR_TYPES[kind];

interface StatusCause {
  field?: string;
  message?: string;
  reason?: string;
}

const optionalString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The causes of a Kubernetes Status (metav1.StatusCause: field, message, reason). */
function causesOf(status: unknown): StatusCause[] {
  if (!isObject(status) || !isObject(status["details"])) return [];
  const causes: unknown = status["details"]["causes"];
  if (!Array.isArray(causes)) return [];
  return causes.map((c: unknown) => {
    const cause = isObject(c) ? c : {};
    return {
      field: optionalString(cause["field"]),
      message: optionalString(cause["message"]),
      reason: optionalString(cause["reason"]),
    };
  });
}

/** The fields of an ARM request body: a refusal naming anything else names what the service made. */
const ARM_FIELD = /^(properties|location|tags|identity|name|id)(\.|\[|$)/;
/** Words of a refusal that name the CR rather than the ARM request (its metadata, status, kind). */
const CR_INTERNALS = /metadata\.|status\.|<nil>|\bself\b|hcp\.aro\.dev|HcpCluster|NodePool\b/;

/** The longest refusal message passed on: the API server's may quote a whole value. */
const MAX_MESSAGE = 512;

const GENERIC_REFUSAL =
  "The resource could not be stored: a value the service derives from the request is invalid.";
const TOO_LARGE_TO_STORE = "The resource is too large to store: shorten its tags, identity or properties.";

/**
 * One cause of a refusal in ARM's terms: a CR field path mapped to the request's field, and never
 * the CR's own shape; a cause about a field the client did not send is named generically.
 */
function armCause(cause: StatusCause): FieldError {
  const field = cause.field ?? "";
  if (field.startsWith("metadata.annotations")) return { target: "", message: TOO_LARGE_TO_STORE };
  const target = armFieldPath(field);
  const message = armFieldPath(cause.message || cause.reason || "");
  if (!ARM_FIELD.test(target)) return { target: "", message: GENERIC_REFUSAL };
  if (message && !CR_INTERNALS.test(message)) return { target, message: shorten(message, MAX_MESSAGE) };
  // A rule without a message of its own: `self == oldSelf` is the CRD's immutability rule.
  const immutable = /oldSelf/.test(message);
  return {
    target,
    message: immutable
      ? `Field '${target}' cannot be changed after creation`
      : `The value of '${target}' is invalid.`,
  };
}

/** A refusal's top-level message in ARM's terms, or the generic one when it names CR internals. */
function armMessage(err: KubeApiError): string {
  const raw = isObject(err.status) ? text(err.status["message"]) || err.message : err.message;
  const message = armFieldPath(raw);
  return !message || CR_INTERNALS.test(message) ? GENERIC_REFUSAL : shorten(message, MAX_MESSAGE);
}

/** etcd's refusal of an object over its size limit, which the API server passes on. */
const isTooLargeForEtcd = (err: KubeApiError): boolean => /request is too large/i.test(err.message);

/** A CR write the API server refused, as ARM reports it; undefined for failures that are ours. */
export function cloudErrorFromKube(err: unknown): CloudError | undefined {
  if (!(err instanceof KubeApiError)) return undefined;
  if (err.code === 413 || isTooLargeForEtcd(err))
    return new CloudError(413, { code: CODES.InvalidResource, message: TOO_LARGE_TO_STORE });
  if (err.code === 422 || err.code === 400) {
    const errors = causesOf(err.status).map(armCause);
    if (errors.length > 0) return fieldErrors(errors);
    return new CloudError(400, { code: CODES.InvalidRequestContent, message: armMessage(err) });
  }
  if (err.code === 409)
    return conflict("The resource was changed by another request at the same time; retry the request.");
  return undefined;
}

/** Runs a CR write; refusals become CloudErrors, other failures are rethrown. */
export async function kubeWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw cloudErrorFromKube(err) ?? err;
  }
}

/**
 * Server-side dry-run create: the API server runs defaulting, schema and CEL validation and
 * admission, and stores nothing.
 */
export async function dryRunCreate(client: KubeClient, t: ResourceType, obj: KubeObject): Promise<void> {
  await client.create(t, obj, { dryRun: true });
}

const DNS_LABEL = /^[a-z]([-a-z0-9]{0,13}[a-z0-9])?$/;

/**
 * A new cluster's DNS prefix must be free in the region: the cluster's zone is delegated from the
 * region's parent zone, and a second cluster with the same prefix could only fail owning it.
 */
export async function checkDnsPrefixFree(
  client: KubeClient,
  prefix: string,
  self: { name: string; namespace: string },
): Promise<void> {
  // One the CRD refuses needs no look-up (and would not make a field selector).
  if (!DNS_LABEL.test(prefix)) return;
  const found = await client.list(HcpClusterResource, {
    fieldSelector: `${DNS_PREFIX_FIELD}=${prefix}`,
    limit: 2,
  });
  const others = found.items.filter(
    (c) => c.metadata.name !== self.name || c.metadata.namespace !== self.namespace,
  );
  if (others.length > 0)
    throw fieldErrors([
      {
        target: "properties.dns.baseDomainPrefix",
        message: `The DNS prefix '${prefix}' is taken by another cluster in this region; choose another 'properties.dns.baseDomainPrefix'`,
      },
    ]);
}
