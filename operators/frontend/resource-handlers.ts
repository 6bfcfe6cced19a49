/**
 * hcpOpenShiftClusters and their nodePools and externalAuths: PUT (create 201, replace 200), PATCH (202, merge onto the
 * stored resource, never creates), GET, DELETE (202, 204 when missing) and LIST with nextLink
 * paging, with ARO HCP's conflict rules (an operation past its deadline leaves the resource
 * Failed, which takes the next request; a DELETE is refused only while Deleting). A PUT or PATCH is one CR write that carries its operation
 * (operations.ts); a DELETE stores its operation in a ConfigMap first, then deletes the CR.
 */
import type { ExternalAuth, HcpCluster, NodePool, VersionSpec } from "../api/v1alpha1/index.ts";
import { KubeApiError, type KubeClient, type KubeObject } from "../runtime/kube.ts";
import type { Logger } from "../runtime/logger.ts";
import {
  carryHidden,
  propertiesToHub,
  toVersioned,
  withHubDefaults,
  type ArmResource,
  type HubProperties,
  type VersionedBody,
} from "./hub-conversion.ts";
import { CloudError, CODES, conflict, fieldErrors, resourceNotFound } from "./errors.ts";
import { header, type ArmRequest, type Reply } from "./arm-request.ts";
import { checkDnsPrefixFree, crType, kubeWrite } from "./service-cluster.ts";
import {
  ANNOTATIONS,
  LABELS,
  clusterCRName,
  externalAuthCRName,
  nodePoolCRName,
  resourceGroupLabel,
  subscriptionNamespace,
} from "./names.ts";
import type { OperationDoc } from "../api/v1alpha1/index.ts";
import { currentOnCR, newOperationId, operationKey } from "./operations/document.ts";
import type { OperationStore } from "./operations/store.ts";
import {
  clusterOf,
  formatResourceId,
  normalizeLocation,
  operationResultPath,
  operationStatusPath,
  resourceName,
  resourceType,
  type ResourceId,
  type ResourceKind,
} from "./resource-id.ts";
import type { JsonObject } from "./body-schema.ts";
import { readPatchBody, readPutBody } from "./request-body.ts";
import {
  isTerminal,
  resourceState,
  type OperationRequest,
  type ProvisioningState,
} from "./provisioning-state.ts";
import {
  clusterFromCR,
  clusterToCR,
  defaultClusterProperties,
  isExternalAuth,
  isNodePool,
  nodePoolFromCR,
  nodePoolToCR,
  versionSpec,
  type ArmCR,
  type ToCRContext,
} from "./cr-mapping.ts";
import { externalAuthFromCR, externalAuthToCR } from "./external-auth-mapping.ts";
import type { ExternalAuthProperties } from "./api-version-schemas.ts";
import { compareVersions, poolTooFarBehind } from "../releases/catalog.ts";
import { checkVersion, defaultVersion, type Catalog, type CatalogReader } from "./openshift-versions.ts";
import { clusterVersionHold } from "./cluster-version.ts";
import { checkOperatorIdentities } from "./managed-identities.ts";
import { credentialCR, credentialTypes, requestedCsr, requesterOf, revocationCR } from "./credentials.ts";
import { boundOf, deadlineAfter, type OperationDeadlines } from "./operations/deadlines.ts";
import { notificationUriOf } from "./operations/notification-uri.ts";
import type { AzureChecks } from "./azure-checks.ts";
import { checkPreviewFeatures } from "./preview-features.ts";

export interface ResourceDeps {
  client: KubeClient;
  operations: OperationStore;
  catalog: CatalogReader;
  /** The clock ends of life are judged by (default Date.now). */
  now?: () => number;
  /** Items per LIST page. */
  pageSize: number;
  /** How long each class of operation may run (deadlines.ts). */
  deadlines: OperationDeadlines;
  /** Hosts an Azure-AsyncNotificationUri may name (notifier.ts). */
  notificationHosts: string[];
  log: Logger;
  /** The customer's Azure resources a create relies on, checked before it is written (azure-checks.ts). */
  azure?: AzureChecks;
}

type CR = ArmCR;

/** One write of an ARM request: the resource as it will be, its operation, the CR before. */
interface Change {
  req: ArmRequest;
  t: Target;
  hub: ArmResource;
  op: OperationDoc;
  existing: CR | undefined;
  /** Operation annotations besides the request's: the document and the history (operations.ts). */
  operationAnnotations: Record<string, string>;
  /** A create tried without reading first: a CR of that name is reported as FoundExisting. */
  mayExist?: boolean;
}

/** A create tried without reading first met a CR of that name: the PUT takes the reading path. */
class FoundExisting extends Error {}

/** Where a resource's CR lives. */
interface Target {
  id: ResourceId;
  namespace: string;
  name: string;
  /** For node pools and external auths: the HcpCluster's name. */
  clusterName?: string;
}

export function targetOf(id: ResourceId): Target {
  const namespace = subscriptionNamespace(id.subscriptionId);
  const cluster = clusterCRName(id.resourceGroup, id.cluster);
  if (id.nodePool !== undefined)
    return {
      id,
      namespace,
      name: nodePoolCRName(id.resourceGroup, id.cluster, id.nodePool),
      clusterName: cluster,
    };
  if (id.externalAuth !== undefined)
    return {
      id,
      namespace,
      name: externalAuthCRName(id.resourceGroup, id.cluster, id.externalAuth),
      clusterName: cluster,
    };
  return { id, namespace, name: cluster };
}

/** The hub resource a CR holds (`kind` names what `cr` is). */
export function fromCR(_kind: ResourceKind, cr: CR): ArmResource {
  if (isExternalAuth(cr)) return externalAuthFromCR(cr);
  return isNodePool(cr) ? nodePoolFromCR(cr) : clusterFromCR(cr);
}

/** The CR of a hub resource of `kind`. */
function toCR(kind: ResourceKind, hub: ArmResource, ctx: ToCRContext): CR {
  // The hub's properties are those of `kind`: they were read with its schema.
  if (kind === "externalAuth") return externalAuthToCR(hub as ArmResource<ExternalAuthProperties>, ctx);
  return kind === "cluster" ? clusterToCR(hub, ctx) : nodePoolToCR(hub, ctx);
}

function sameId(cr: KubeObject, id: ResourceId): boolean {
  return (
    cr.metadata.annotations?.[ANNOTATIONS.resourceId]?.toLowerCase() === formatResourceId(id).toLowerCase()
  );
}

const stateWord = (s: ProvisioningState): string => (s === "Deleting" ? "deleting" : "provisioning");

const busy = (state: ProvisioningState): CloudError =>
  conflict(`Cannot update resource while resource is "${state.toLowerCase()}"`);

/**
 * A node pool whose controller holds its current version back (ValidVersion False at this
 * generation: ahead of the control plane, unknown, a downgrade): no rollout runs for it.
 */
function heldOnVersion(cr: CR): boolean {
  if (!isNodePool(cr)) return false;
  const valid = cr.status?.conditions?.find((c) => c.type === "ValidVersion");
  return valid?.status === "False" && valid.observedGeneration === cr.metadata.generation;
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

/**
 * The hub properties of a versioned body: on update, with what the request's version cannot see
 * kept from `stored`; on create, with the defaults the service picks.
 */
function hubProperties(
  req: ArmRequest,
  id: ResourceId,
  doc: VersionedBody,
  stored: ArmResource | undefined,
): HubProperties {
  const properties = propertiesToHub(doc, req.apiVersion, id.kind);
  if (stored) {
    const seen = propertiesToHub(toVersioned(stored, req.apiVersion, id.kind), req.apiVersion, id.kind);
    return carryHidden(stored.properties, seen, properties);
  }
  const created = withHubDefaults(properties, id.kind);
  return id.kind === "cluster" ? defaultClusterProperties(id, created) : created;
}

const channelGroupOf = (p: HubProperties): string | undefined =>
  "version" in p ? p.version?.channelGroup : undefined;

/** Preview features the request asks for must be registered on its subscription. */
function checkGated(
  req: ArmRequest,
  id: ResourceId,
  [doc, properties]: [VersionedBody, HubProperties],
  stored: ArmResource | undefined,
): void {
  checkPreviewFeatures(req.subscription, {
    kind: id.kind,
    channelGroup: channelGroupOf(properties),
    tags: doc.tags,
    ...(stored ? { stored: { channelGroup: channelGroupOf(stored.properties), tags: stored.tags } } : {}),
  });
}

function checkIdentities(doc: VersionedBody, properties: HubProperties): void {
  const errors = checkOperatorIdentities(doc.identity, properties);
  if (errors.length > 0) throw fieldErrors(errors);
}

function operationHeaders(req: ArmRequest, op: OperationDoc, withLocation: boolean): Record<string, string> {
  const sub = req.params["subscriptionId"] ?? "";
  const q = `?api-version=${req.apiVersion}`;
  return {
    "azure-asyncoperation": `${req.base}${operationStatusPath(sub, op.location, op.id)}${q}`,
    ...(withLocation ? { location: `${req.base}${operationResultPath(sub, op.location, op.id)}${q}` } : {}),
    ...(op.notificationUri ? { "azure-asyncnotification": "Enabled" } : {}),
  };
}

export class ResourceHandlers {
  readonly #d: ResourceDeps;

  constructor(deps: ResourceDeps) {
    this.#d = deps;
  }

  async #find(kind: ResourceKind, t: Target): Promise<CR | undefined> {
    const cr = await this.#d.client.find<CR>(crType(kind), t.name, t.namespace);
    return cr && sameId(cr, t.id) ? cr : undefined;
  }

  async get(req: ArmRequest, id: ResourceId): Promise<Reply> {
    const cr = await this.#find(id.kind, targetOf(id));
    if (!cr) throw resourceNotFound(resourceType(id.kind), resourceName(id), id.resourceGroup);
    return { status: 200, body: toVersioned(fromCR(id.kind, cr), req.apiVersion, id.kind) };
  }

  /** 409 unless the parent cluster of a node pool or external auth is settled (B.3 conflict rules). */
  async #checkParent(id: ResourceId, verb: "create" | "update" | "delete"): Promise<CR | undefined> {
    if (id.kind === "cluster") return undefined;
    const parentId = clusterOf(id);
    const parent = await this.#find("cluster", targetOf(parentId));
    if (!parent) throw resourceNotFound(resourceType("cluster"), parentId.cluster, id.resourceGroup);
    const { state } = resourceState(parent);
    if (state === "Accepted" || state === "Provisioning" || state === "Deleting")
      throw conflict(`Cannot ${verb} resource while parent resource is ${stateWord(state)}`);
    // A parent whose delete ran past its deadline (Failed) is still going: nothing new goes under it.
    if (parent.metadata.deletionTimestamp && verb !== "delete")
      throw conflict(`Cannot ${verb} resource while parent resource is deleting`);
    return parent;
  }

  /**
   * A node pool may not ask for a version more than two minors behind its cluster's (OpenShift's
   * skew policy); a new one not for one ahead of it either: it could never roll out (the controller
   * holds a pool that would run ahead of its control plane), so the create is refused.
   */
  #checkPoolVersion(parent: CR | undefined, hub: ArmResource, isNew: boolean): void {
    const wanted = hub.properties.version?.id;
    const clusterVersion = parent && "version" in parent.spec ? parent.spec.version?.id : undefined;
    if (!wanted || !clusterVersion) return;
    const behind = poolTooFarBehind(wanted, clusterVersion);
    if (behind)
      throw fieldErrors([
        { target: "properties.version.id", message: `Node pool version ${wanted} is too old: ${behind}` },
      ]);
    const ceiling = controlPlaneCeiling(parent, clusterVersion);
    if (!isNew || compareVersions(wanted, ceiling) <= 0) return;
    throw fieldErrors([
      {
        target: "properties.version.id",
        message: `Node pool version ${wanted} is newer than its cluster's version ${ceiling}; a node pool cannot run ahead of its control plane`,
      },
    ]);
  }

  /**
   * 409 while an operation runs on the resource: ARM allows one at a time. A node pool held on its
   * version has nothing under way for it, so the change that gets it out, a new version, passes;
   * true when only that change may (checked by #checkVersionFix once the body is read).
   */
  #checkSettled(cr: CR): boolean {
    const { state } = resourceState(cr);
    if (isTerminal(state)) return false;
    if (heldOnVersion(cr)) return true;
    throw busy(state);
  }

  #checkVersionFix(cr: CR, stored: ArmResource, hub: ArmResource): void {
    if (hub.properties.version?.id === stored.properties.version?.id) throw busy(resourceState(cr).state);
  }

  /** A new operation; `upgrade` when an Update changes version.id (its deadline is longer). */
  #newOperation(
    req: ArmRequest,
    t: Target,
    request: OperationRequest,
    at: { location: string; upgrade?: boolean },
  ): OperationDoc {
    const { id } = t;
    const now = new Date().toISOString();
    const bound = boundOf(this.#d.deadlines, { request, kind: id.kind, upgrade: at.upgrade === true });
    const notificationUri = notificationUriOf(req, this.#d.notificationHosts);
    return {
      id: newOperationId(id.kind, t.name),
      request,
      resourceId: formatResourceId(id),
      kind: id.kind,
      target: t.name,
      location: normalizeLocation(at.location),
      apiVersion: req.apiVersion,
      tenantId: header(req, "x-ms-home-tenant-id"),
      clientObjectId: header(req, "x-ms-client-object-id"),
      clientRequestId: req.clientRequestId,
      correlationRequestId: req.correlationRequestId,
      startTime: now,
      lastTransitionTime: now,
      status: request === "Delete" ? "Deleting" : "Accepted",
      deadline: deadlineAfter(now, bound),
      ...(notificationUri ? { notificationUri } : {}),
    };
  }

  #requestAnnotations(req: ArmRequest, op: OperationDoc): Record<string, string> {
    return {
      [ANNOTATIONS.operation]: op.id,
      [ANNOTATIONS.operationRequest]: op.request,
      ...(op.deadline ? { [ANNOTATIONS.operationDeadline]: op.deadline } : {}),
      ...(req.correlationRequestId ? { [ANNOTATIONS.correlationRequestId]: req.correlationRequestId } : {}),
      ...(req.clientRequestId ? { [ANNOTATIONS.clientRequestId]: req.clientRequestId } : {}),
    };
  }

  /** Hub resource from a versioned body; `stored` is the resource before the change, if any. */
  async #toHub(
    req: ArmRequest,
    id: ResourceId,
    doc: VersionedBody,
    stored: ArmResource | undefined,
  ): Promise<ArmResource> {
    const properties = hubProperties(req, id, doc, stored);
    checkGated(req, id, [doc, properties], stored);
    if (id.kind === "cluster") checkIdentities(doc, properties);
    await this.#checkVersions(req, id, properties, stored);
    // Last, once the body is known good: a look-up across the region.
    if (!stored) await this.#checkDnsPrefix(id, properties);
    await this.#checkAzure(id, doc, properties, stored);
    const systemData = systemDataOf(req, stored?.systemData);
    return {
      id: stored?.id ?? formatResourceId(id),
      name: resourceName(id),
      type: resourceType(id.kind),
      location: stored?.location ?? doc.location ?? "",
      ...(doc.tags ? { tags: doc.tags } : {}),
      ...(doc.identity ? { identity: doc.identity } : {}),
      ...(systemData ? { systemData } : {}),
      properties,
    };
  }

  /**
   * A cluster's version on the update graph (cluster-version.ts): a new one offered and not past
   * its end of life; a changed one reachable from what the cluster runs, leaving no node pool more
   * than two minors behind. An unchanged version is not judged again: a cluster on a release past
   * its end of life keeps running and takes other updates.
   */
  async #checkClusterVersion(
    id: ResourceId,
    catalog: Catalog,
    version: VersionSpec,
    stored: ArmResource | undefined,
  ): Promise<void> {
    if (stored && sameVersion(stored.properties.version, version)) return;
    const cluster = stored ? await this.#clusterAndPools(id) : undefined;
    const hold = clusterVersionHold({
      catalog: catalog.catalog,
      version,
      ...cluster,
      now: (this.#d.now ?? Date.now)(),
    });
    if (hold) throw fieldErrors([{ target: "properties.version.id", message: hold.message }]);
  }

  /** The stored cluster and its node pools, which a change of its version is planned with. */
  async #clusterAndPools(id: ResourceId): Promise<{ existing: HcpCluster; pools: NodePool[] } | undefined> {
    const t = targetOf(id);
    const existing = await this.#find("cluster", t);
    if (!existing || isNodePool(existing) || isExternalAuth(existing)) return undefined;
    const pools = await this.#d.client.list<NodePool>(crType("nodePool"), {
      namespace: t.namespace,
      labelSelector: `${LABELS.cluster}=${t.name}`,
    });
    return { existing, pools: pools.items };
  }

  /**
   * What the customer's Azure must hold: for a new cluster its identities, their roles and its KMS
   * key (on an update, the identities it names anew and a changed key); for a new node pool its VM
   * size in its zone and the vCPU quota, for a growing one the quota.
   */
  async #checkAzure(
    id: ResourceId,
    doc: VersionedBody,
    properties: HubProperties,
    stored: ArmResource | undefined,
  ): Promise<void> {
    const azure = this.#d.azure;
    if (!azure || id.kind === "externalAuth") return;
    if (id.kind === "cluster")
      await azure.cluster({
        subscriptionId: id.subscriptionId,
        identity: doc.identity,
        properties,
        ...(stored ? { stored: stored.properties } : {}),
      });
    else
      await azure.nodePool({
        subscriptionId: id.subscriptionId,
        location: stored?.location ?? doc.location ?? "",
        properties,
        ...(stored ? { stored: stored.properties } : {}),
      });
  }

  /** A new cluster's DNS prefix must be free in the region. */
  async #checkDnsPrefix(id: ResourceId, properties: HubProperties): Promise<void> {
    const prefix = "dns" in properties ? properties.dns?.baseDomainPrefix : undefined;
    if (prefix !== undefined) await checkDnsPrefixFree(this.#d.client, prefix, targetOf(id));
  }

  /**
   * Versions must be in the catalog, and a cluster's on the update graph (#checkClusterVersion);
   * a 2024-06-10-preview cluster without one gets the newest stable.
   */
  async #checkVersions(
    req: ArmRequest,
    id: ResourceId,
    properties: HubProperties,
    stored: ArmResource | undefined,
  ): Promise<void> {
    const catalog = await this.#d.catalog.read();
    const version = properties.version;
    if (id.kind === "cluster" && version?.id === undefined) {
      const id = defaultVersion(catalog, version?.channelGroup);
      if (!id)
        throw fieldErrors([
          { target: "properties.version.id", message: "Missing required field 'properties.version.id'" },
        ]);
      properties.version = { ...(version ?? {}), id };
      return;
    }
    if (version?.id === undefined) return;
    if (id.kind === "cluster" && catalog)
      return this.#checkClusterVersion(id, catalog, versionSpec(version), stored);
    const errors = checkVersion(catalog, versionSpec(version), "properties.version.id");
    if (errors.length > 0) throw fieldErrors(errors);
  }

  #buildCR({ req, t, hub, op, existing, operationAnnotations }: Change): CR {
    const ctx = {
      id: existing ? idAsCreated(existing, t.id) : t.id,
      namespace: t.namespace,
      name: t.name,
      tenantId: tenantOfCR(existing) ?? tenantOf(req),
      annotations: { ...this.#requestAnnotations(req, op), ...operationAnnotations },
      ...(t.clusterName ? { clusterName: t.clusterName } : {}),
    };
    const next: CR = toCR(t.id.kind, hub, ctx);
    next.metadata.labels = {
      ...next.metadata.labels,
      [LABELS.operationKey]: operationKey(t.id.kind, t.name),
    };
    const cr = existing ? mergeExisting(existing, next) : next;
    // Names the operation the notifier is to watch on this CR; one without a URI takes it off.
    const labels = { ...cr.metadata.labels };
    delete labels[LABELS.notification];
    if (op.notificationUri) labels[LABELS.notification] = op.id;
    return { ...cr, metadata: { ...cr.metadata, labels } };
  }

  async put(req: ArmRequest, id: ResourceId): Promise<Reply> {
    // With the customer's Azure to check, reading first is cheaper: a PUT of an existing cluster
    // would otherwise pay for a create's checks (tens of ARM calls) before learning it is an update.
    if (id.kind === "cluster" && !this.#d.azure) {
      const created = await this.#createFirst(req, id);
      if (created) return created;
    }
    return this.#putRead(req, id);
  }

  /**
   * Most cluster PUTs create, so the create is tried without reading first: one apiserver call
   * instead of two. Undefined when a CR of that name exists or the body is refused without a
   * stored resource in view; the reading path then answers, with that resource in view. (A node
   * pool PUT reads its parent anyway.)
   */
  async #createFirst(req: ArmRequest, id: ResourceId): Promise<Reply | undefined> {
    const t = targetOf(id);
    let hub: ArmResource;
    try {
      hub = await this.#toHub(req, id, readPutBody(req, id, undefined), undefined);
    } catch {
      return undefined;
    }
    const op = this.#newOperation(req, t, "Create", { location: hub.location });
    try {
      const written = await this.#write({ req, t, hub, op, existing: undefined, mayExist: true });
      const body = toVersioned(fromCR(id.kind, written), req.apiVersion, id.kind);
      return { status: 201, body, headers: operationHeaders(req, op, false) };
    } catch (err) {
      if (err instanceof FoundExisting) return undefined;
      throw err;
    }
  }

  async #putRead(req: ArmRequest, id: ResourceId): Promise<Reply> {
    const t = targetOf(id);
    const existing = await this.#find(id.kind, t);
    if (existing?.metadata.deletionTimestamp)
      throw conflict('Cannot update resource while resource is "deleting"');
    const parent = await this.#checkChildCreate(id, t, existing);
    const versionFixOnly = existing ? this.#checkSettled(existing) : false;
    const stored = existing ? fromCR(id.kind, existing) : undefined;
    const old = stored ? toVersioned(stored, req.apiVersion, id.kind) : undefined;
    const doc = readPutBody(req, id, old);
    const hub = withParentLocation(await this.#toHub(req, id, doc, stored), parent);
    if (id.kind === "nodePool") this.#checkPoolVersion(parent, hub, !existing);
    if (existing && versionFixOnly && stored) this.#checkVersionFix(existing, stored, hub);
    const upgrade = isUpgrade(stored, hub);
    const op = this.#newOperation(req, t, existing ? "Update" : "Create", {
      location: hub.location,
      upgrade,
    });
    const written = await this.#write({ req, t, hub, op, existing });
    const body = toVersioned(fromCR(id.kind, written), req.apiVersion, id.kind);
    return { status: existing ? 200 : 201, body, headers: operationHeaders(req, op, false) };
  }

  async patch(req: ArmRequest, id: ResourceId): Promise<Reply> {
    const t = targetOf(id);
    const existing = await this.#find(id.kind, t);
    if (!existing) throw resourceNotFound(resourceType(id.kind), resourceName(id), id.resourceGroup);
    if (existing.metadata.deletionTimestamp)
      throw conflict('Cannot update resource while resource is "deleting"');
    const parent = await this.#checkParent(id, "update");
    const versionFixOnly = this.#checkSettled(existing);
    const stored = fromCR(id.kind, existing);
    const doc = readPatchBody(req, id, toVersioned(stored, req.apiVersion, id.kind));
    const hub = withParentLocation(await this.#toHub(req, id, doc, stored), parent);
    if (id.kind === "nodePool") this.#checkPoolVersion(parent, hub, false);
    if (versionFixOnly) this.#checkVersionFix(existing, stored, hub);
    const op = this.#newOperation(req, t, "Update", {
      location: hub.location,
      upgrade: isUpgrade(stored, hub),
    });
    const written = await this.#write({ req, t, hub, op, existing });
    const body = toVersioned(fromCR(id.kind, written), req.apiVersion, id.kind);
    return { status: 202, body, headers: operationHeaders(req, op, true) };
  }

  /**
   * The CR with the operation's document on it, and the replaced operation moved into its history:
   * one write. A refused write leaves nothing behind.
   */
  async #write(change: Omit<Change, "operationAnnotations">): Promise<CR> {
    const { req, t, op, existing } = change;
    const history = existing ? await this.#d.operations.replace(t.namespace, existing) : {};
    const cr = this.#buildCR({
      ...change,
      operationAnnotations: { [ANNOTATIONS.operationDoc]: JSON.stringify(op), ...history },
    });
    const type = crType(t.id.kind);
    const written = await kubeWrite(() =>
      existing ? this.#d.client.replace<CR>(type, cr) : this.#create(type, cr, change.mayExist === true),
    );
    // An operation of an older frontend, kept in a ConfigMap.
    const previous = existing?.metadata.annotations?.[ANNOTATIONS.operation];
    if (existing && previous && previous !== currentOnCR(existing)?.id)
      await this.#d.operations.supersede(t.namespace, previous, existing, false);
    req.log.info("Wrote the CR of an ARM request", {
      operation: op.id,
      request: op.request,
      name: t.name,
      namespace: t.namespace,
    });
    return written;
  }

  async #create(type: ReturnType<typeof crType>, cr: CR, mayExist: boolean): Promise<CR> {
    try {
      return await this.#d.client.create<CR>(type, cr);
    } catch (err) {
      if (mayExist && err instanceof KubeApiError && err.reason === "AlreadyExists")
        throw new FoundExisting();
      throw err;
    }
  }

  async delete(req: ArmRequest, id: ResourceId): Promise<Reply> {
    const t = targetOf(id);
    const existing = await this.#find(id.kind, t);
    if (!existing) return { status: 204 };
    // A delete past its deadline is Failed, and ARM may send another: it starts a new operation.
    if (resourceState(existing).state === "Deleting") throw conflict("Resource is already deleting");
    if (id.kind !== "cluster") await this.#checkParent(id, "delete");
    const location = fromCR(id.kind, existing).location;
    const op = {
      ...this.#newOperation(req, t, "Delete", { location }),
      ...(existing.metadata.uid ? { targetUid: existing.metadata.uid } : {}),
    };
    await this.#d.operations.create(t.namespace, op);
    await this.#d.operations.retire(t.namespace, existing);
    if (id.kind === "cluster") await this.#cancelChildren(t);
    const type = crType(id.kind);
    await this.#d.client.mergePatch(
      type,
      { name: t.name, namespace: t.namespace },
      {
        metadata: {
          labels: { [LABELS.notification]: op.notificationUri ? op.id : null },
          annotations: {
            // This request's IDs replace the last one's; a request without them leaves none.
            [ANNOTATIONS.correlationRequestId]: null,
            [ANNOTATIONS.clientRequestId]: null,
            ...this.#requestAnnotations(req, op),
            [ANNOTATIONS.operationDoc]: null,
            [ANNOTATIONS.operationHistory]: null,
          },
        },
      },
    );
    if (!existing.metadata.deletionTimestamp)
      await this.#d.client.delete(
        type,
        { name: t.name, namespace: t.namespace },
        { propagationPolicy: "Background" },
      );
    req.log.info("Deleting the CR of an ARM request", {
      operation: op.id,
      name: t.name,
      namespace: t.namespace,
    });
    return { status: 202, headers: operationHeaders(req, op, true) };
  }

  /** The parent of a node pool or external auth, settled; a new external auth the cluster's only one. */
  async #checkChildCreate(id: ResourceId, t: Target, existing: CR | undefined): Promise<CR | undefined> {
    const parent = await this.#checkParent(id, existing ? "update" : "create");
    if (!existing && id.kind === "externalAuth") await this.#checkOnlyExternalAuth(t);
    return parent;
  }

  /**
   * ARO HCP takes one external auth per cluster (and HyperShift one OIDC provider): a create while
   * the cluster has one, deleting or not, is refused.
   */
  async #checkOnlyExternalAuth(t: Target): Promise<void> {
    const others = await this.#d.client.list<ExternalAuth>(crType("externalAuth"), {
      namespace: t.namespace,
      labelSelector: `${LABELS.cluster}=${t.clusterName ?? ""}`,
      limit: 1,
    });
    if (others.items.length === 0) return;
    throw new CloudError(400, {
      code: CODES.InvalidRequestContent,
      message:
        "Forbidden: There are other external auths on the cluster. Only one external auth is allowed per cluster.",
      target: "name",
    });
  }

  /** Node pools and external auths go with their cluster (the cluster controller deletes them); their running operations end. */
  async #cancelChildren(t: Target): Promise<void> {
    for (const kind of ["nodePool", "externalAuth"] as const) {
      const children = await this.#d.client.listAll<NodePool | ExternalAuth>(crType(kind), {
        namespace: t.namespace,
        labelSelector: `${LABELS.cluster}=${t.name}`,
      });
      for (const c of children.items) await this.#d.operations.retire(t.namespace, c);
    }
  }

  async list(
    req: ArmRequest,
    kind: ResourceKind,
    scope: Omit<ResourceId, "kind" | "cluster"> & { cluster?: string },
  ): Promise<Reply> {
    const namespace = subscriptionNamespace(scope.subscriptionId);
    const selectors: string[] = [];
    if (scope.resourceGroup)
      selectors.push(`${LABELS.resourceGroup}=${resourceGroupLabel(scope.resourceGroup)}`);
    if (scope.cluster)
      selectors.push(`${LABELS.cluster}=${clusterCRName(scope.resourceGroup, scope.cluster)}`);
    const token = req.query.get("$skipToken") ?? undefined;
    const page = await this.#d.client
      .list<CR>(crType(kind), {
        namespace,
        labelSelector: selectors.join(","),
        limit: this.#d.pageSize,
        ...(token ? { continue: token } : {}),
      })
      .catch((err: unknown) => {
        throw token !== undefined ? (skipTokenError(err) ?? err) : err;
      });
    const value = page.items
      .filter((cr) => inScope(cr, scope))
      .map((cr) => toVersioned(fromCR(kind, cr), req.apiVersion, kind));
    const next = page.metadata.continue;
    const nextLink = next
      ? `${req.base}${req.path}?api-version=${req.apiVersion}&$skipToken=${encodeURIComponent(next)}`
      : undefined;
    return { status: 200, body: { value, ...(nextLink ? { nextLink } : {}) } };
  }

  /**
   * POST requestAdminCredential: a BreakglassCredential and its operation (credentials.ts); 409
   * while the cluster is not settled, as for any other change.
   */
  async requestAdminCredential(req: ArmRequest, id: ResourceId): Promise<Reply> {
    const { cluster, t } = await this.#settledCluster(id);
    const csr = await requestedCsr(req);
    const op = this.#newOperation(req, t, "RequestCredential", {
      location: fromCR("cluster", cluster).location,
    });
    const name = `arm-${op.id.toLowerCase()}`;
    await this.#d.operations.create(t.namespace, { ...op, credential: name });
    const requester = requesterOf(req);
    await this.#d.client.create(credentialTypes.credential, credentialCR(cluster, name, requester, csr));
    req.log.info("Audit: break-glass credential requested", {
      audit: "breakglass",
      action: "request",
      operation: op.id,
      cluster: t.name,
      requester,
      credential: name,
      clientCsr: csr !== undefined,
    });
    return { status: 202, headers: { ...operationHeaders(req, op, true), "retry-after": "1" } };
  }

  /** POST revokeCredentials: a BreakglassRevocation and its operation; 409 while the cluster is not settled. */
  async revokeCredentials(req: ArmRequest, id: ResourceId): Promise<Reply> {
    const { cluster, t } = await this.#settledCluster(id);
    const op = this.#newOperation(req, t, "RevokeCredentials", {
      location: fromCR("cluster", cluster).location,
    });
    const name = `arm-${op.id.toLowerCase()}`;
    await this.#d.operations.create(t.namespace, { ...op, credential: name });
    const requester = requesterOf(req);
    await this.#d.client.create(credentialTypes.revocation, revocationCR(cluster, name, requester));
    req.log.info("Audit: break-glass credentials revocation requested", {
      audit: "breakglass",
      action: "revoke",
      operation: op.id,
      cluster: t.name,
      requester,
      revocation: name,
    });
    return { status: 202, headers: { ...operationHeaders(req, op, true), "retry-after": "1" } };
  }

  async #settledCluster(id: ResourceId): Promise<{ cluster: HcpCluster; t: Target }> {
    const t = targetOf(id);
    const cr = await this.#find("cluster", t);
    if (!cr || isNodePool(cr) || isExternalAuth(cr))
      throw resourceNotFound(resourceType("cluster"), id.cluster, id.resourceGroup);
    const { state } = resourceState(cr);
    if (!isTerminal(state)) throw busy(state);
    if (cr.metadata.deletionTimestamp) throw busy("Deleting");
    return { cluster: cr, t };
  }
}

/** Whether an update changes version.id: an upgrade, which has a longer deadline. */
function isUpgrade(stored: ArmResource | undefined, hub: ArmResource): boolean {
  const before = stored?.properties.version?.id;
  const after = hub.properties.version?.id;
  return before !== undefined && after !== undefined && after !== before;
}

/**
 * An external auth (a ProxyResource) has no location of its own: its operations live in its
 * cluster's. Stored in its envelope, never shown (its schema has no location).
 */
function withParentLocation(hub: ArmResource, parent: CR | undefined): ArmResource {
  if (hub.location || !parent || !isExternalAuthType(hub)) return hub;
  return { ...hub, location: fromCR("cluster", parent).location };
}

const isExternalAuthType = (hub: ArmResource): boolean => hub.type === resourceType("externalAuth");

/** A LIST the API server refused because of the continue token ARM passed as $skipToken. */
function skipTokenError(err: unknown): CloudError | undefined {
  const code = err instanceof Error && "code" in err ? err.code : undefined;
  if (code === 410)
    return new CloudError(400, {
      code: CODES.InvalidParameter,
      message: "The $skipToken has expired; list again from the start.",
      target: "$skipToken",
    });
  if (code === 400)
    return new CloudError(400, {
      code: CODES.InvalidParameter,
      message: "The $skipToken is not one this service issued; use the nextLink of a previous page.",
      target: "$skipToken",
    });
  return undefined;
}

function inScope(
  cr: CR,
  scope: { subscriptionId: string; resourceGroup?: string; cluster?: string },
): boolean {
  const id = cr.metadata.annotations?.[ANNOTATIONS.resourceId]?.toLowerCase();
  if (!id) return false;
  const prefix = scope.resourceGroup
    ? `/subscriptions/${scope.subscriptionId}/resourcegroups/${scope.resourceGroup}/`.toLowerCase()
    : `/subscriptions/${scope.subscriptionId}/`.toLowerCase();
  if (!id.startsWith(prefix)) return false;
  if (!scope.cluster) return true;
  const cluster = `/hcpopenshiftclusters/${scope.cluster.toLowerCase()}/`;
  return id.includes(`${cluster}nodepools/`) || id.includes(`${cluster}externalauths/`);
}

/** The tenant an HcpCluster was created for. */
function tenantOfCR(cr: CR | undefined): string | undefined {
  return cr && !isNodePool(cr) && !isExternalAuth(cr) ? cr.spec.platform.azure.tenantId : undefined;
}

/**
 * The request's resource ID with the subscription cased as at creation: ARM IDs ignore case, so a
 * later request may case it otherwise, and the CR keeps what it was created with.
 */
function idAsCreated(existing: CR, id: ResourceId): ResourceId {
  if (isNodePool(existing) || isExternalAuth(existing)) return id;
  const stored = existing.spec.platform.azure.subscriptionId;
  return stored && stored.toLowerCase() === id.subscriptionId.toLowerCase()
    ? { ...id, subscriptionId: stored }
    : id;
}

function tenantOf(req: ArmRequest): string | undefined {
  const tenant = header(req, "x-ms-home-tenant-id") ?? req.subscription?.properties?.tenantId;
  return typeof tenant === "string" && tenant !== "" ? tenant : undefined;
}

/**
 * The newest version a new node pool may ask for: its cluster's, or the release its control plane
 * is asked to run when that is newer (upgradePolicy AutomaticPatch moves it past the spec).
 */
function controlPlaneCeiling(parent: CR | undefined, clusterVersion: string): string {
  const cluster = parent && !isNodePool(parent) && !isExternalAuth(parent) ? parent : undefined;
  const desired = cluster?.status?.desiredVersion;
  return desired && compareVersions(desired, clusterVersion) > 0 ? desired : clusterVersion;
}

/** The same version id and channel group (stable when none is named). */
function sameVersion(a: { id?: string; channelGroup?: string } | undefined, b: VersionSpec): boolean {
  return a?.id === b.id && (a.channelGroup ?? "stable") === (b.channelGroup ?? "stable");
}

/**
 * The CR to PUT: the new spec and ARM annotations on the stored object's metadata (finalizers,
 * other labels and annotations, resourceVersion for optimistic concurrency), keeping the spec
 * fields ARM has no say in (placement, paused, the DNS base domain, the upgrade policy).
 */
function mergeExisting(existing: CR, next: CR): CR {
  // The last request's IDs go: this request's replace them, or none stays when it sent none.
  const kept = { ...existing.metadata.annotations };
  delete kept[ANNOTATIONS.correlationRequestId];
  delete kept[ANNOTATIONS.clientRequestId];
  const metadata = {
    ...existing.metadata,
    labels: { ...existing.metadata.labels, ...next.metadata.labels },
    annotations: { ...kept, ...next.metadata.annotations },
  };
  if (isNodePool(next) || isNodePool(existing) || isExternalAuth(next) || isExternalAuth(existing))
    return { ...next, metadata };
  const old = existing.spec;
  const upgradePolicy = old.version.upgradePolicy;
  const spec = {
    ...next.spec,
    ...(upgradePolicy ? { version: { ...next.spec.version, upgradePolicy } } : {}),
    ...(old.placement ? { placement: old.placement } : {}),
    ...(old.paused !== undefined ? { paused: old.paused } : {}),
    dns: old.dns,
  };
  return { ...next, metadata, spec };
}
