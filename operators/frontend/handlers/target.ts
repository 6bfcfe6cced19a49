/**
 * Where the CR of an ARM resource lives, how it is found (a CR of that name made for another
 * resource ID is not it), and the conversions between the CR and the ARM resource of each kind.
 */
import type { KubeClient, KubeObject } from "../../runtime/kube.ts";
import type { InternalKind, InternalResource, PropertiesOf } from "../api/internal.ts";
import { clusterFromCR, clusterToCR } from "../mapping/cluster.ts";
import { isExternalAuth, isNodePool, type ArmCR, type ToCRContext } from "../mapping/common.ts";
import { nodePoolFromCR, nodePoolToCR } from "../mapping/node-pool.ts";
import { externalAuthFromCR, externalAuthToCR } from "../mapping/external-auth.ts";
import { ARM_ANNOTATIONS } from "../../api/v1alpha1/index.ts";
import {
  clusterCRName,
  externalAuthCRName,
  nodePoolCRName,
  subscriptionNamespace,
} from "../mapping/names.ts";
import { formatResourceId, type ResourceId, type ResourceKind } from "../resource-id.ts";
import { crType } from "../service-cluster.ts";

/** Where a resource's CR lives. */
export interface Target {
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

/** CR ⇄ internal resource for one kind; `fromCR` is undefined for a CR of another kind. */
interface KindMapping<K extends InternalKind> {
  fromCR(cr: ArmCR): InternalResource<PropertiesOf[K]> | undefined;
  toCR(resource: InternalResource<PropertiesOf[K]>, ctx: ToCRContext): ArmCR;
}

const MAPPINGS: { [K in InternalKind]: KindMapping<K> } = {
  cluster: {
    fromCR: (cr) => (isNodePool(cr) || isExternalAuth(cr) ? undefined : clusterFromCR(cr)),
    toCR: clusterToCR,
  },
  nodePool: { fromCR: (cr) => (isNodePool(cr) ? nodePoolFromCR(cr) : undefined), toCR: nodePoolToCR },
  externalAuth: {
    fromCR: (cr) => (isExternalAuth(cr) ? externalAuthFromCR(cr) : undefined),
    toCR: externalAuthToCR,
  },
};

/** The internal resource a CR of `kind` holds. */
export function fromCR<K extends InternalKind>(kind: K, cr: ArmCR): InternalResource<PropertiesOf[K]> {
  const resource = MAPPINGS[kind].fromCR(cr);
  if (!resource) throw new Error(`${cr.kind} ${cr.metadata.name ?? ""} is not the CR of a ${kind}`);
  return resource;
}

/** The CR of an internal resource of `kind`. */
export function toCR<K extends InternalKind>(
  kind: K,
  resource: InternalResource<PropertiesOf[K]>,
  ctx: ToCRContext,
): ArmCR {
  return MAPPINGS[kind].toCR(resource, ctx);
}

function sameId(cr: KubeObject, id: ResourceId): boolean {
  return (
    cr.metadata.annotations?.[ARM_ANNOTATIONS.resourceId]?.toLowerCase() ===
    formatResourceId(id).toLowerCase()
  );
}

/** The CR of the resource `t` names; undefined when there is none, or one made for another ID. */
export async function findCR(client: KubeClient, kind: ResourceKind, t: Target): Promise<ArmCR | undefined> {
  const cr = await client.find<ArmCR>(crType(kind), t.name, t.namespace);
  return cr && sameId(cr, t.id) ? cr : undefined;
}
