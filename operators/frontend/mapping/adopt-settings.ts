/**
 * Settings that a frontend from before their spec field kept only in a cluster's ARM-only
 * annotation, where nothing honoured them (a customer's authorized CIDRs left the API open). At
 * start the frontend moves the ones that may still change into the spec, where the cluster
 * controller carries them to the HostedCluster: the customer's request takes effect, late. Those
 * fixed at creation (FIPS, the image registry, the ingress type) cannot be adopted: the hosted
 * cluster was made without them (HyperShift's capabilities never change; a public ingress is not
 * made private in place), and GET shows what it has. Every replica may run it: a write is
 * conditional on the resourceVersion read, so one replica moves a cluster's settings and the
 * others find them moved.
 */
import { ARM_ANNOTATIONS, HcpClusterResource, type HcpCluster } from "../../api/v1alpha1/index.ts";
import { KubeApiError, type KubeClient } from "../../runtime/kube.ts";
import type { Logger } from "../../runtime/logger.ts";
import type { ClusterProperties } from "../api/internal.ts";
import { isObject, type JsonObject } from "../api/json.ts";
import { clusterToCR } from "./cluster.ts";
import { parseJson } from "./common.ts";

/**
 * The ARM properties adopted, top-level keys and the nested paths. Etcd encryption is fixed at
 * creation in ARM, but HyperShift takes a key on a running cluster and encrypts what is stored.
 * So is the VNet integration subnet, which every api-version that knows it requires (a cluster
 * without it in the spec could never be PUT again): the CRD takes it once, and HyperShift's router
 * joins the subnet on a running cluster.
 */
const ADOPTED = ["autoscaling", "imageDigestMirrors", "etcd"] as const;
const ADOPTED_NESTED = [
  ["api", "authorizedCidrs"],
  ["platform", "vnetIntegrationSubnetId"],
] as const;

/** The settings of `props` to adopt into the spec, and the annotation's properties without them. */
export function settingsToAdopt(
  props: JsonObject,
): { adopt: Partial<ClusterProperties>; rest: JsonObject } | undefined {
  const rest = structuredClone(props);
  const adopt: JsonObject = {};
  for (const key of ADOPTED)
    if (rest[key] !== undefined) {
      adopt[key] = rest[key];
      delete rest[key];
    }
  for (const [parent, key] of ADOPTED_NESTED) {
    const within = rest[parent];
    if (!isObject(within) || within[key] === undefined) continue;
    adopt[parent] = { [key]: within[key] };
    delete within[key];
    if (Object.keys(within).length === 0) delete rest[parent];
  }
  // The annotation held a request's properties as the frontend had read them: of the schema's shape.
  return Object.keys(adopt).length > 0 ? { adopt, rest } : undefined;
}

/** A platform with nothing in it: the mapping needs one, and nothing of it but the VNet subnet is adopted. */
const NO_PLATFORM: ClusterProperties["platform"] = {
  subnetId: "",
  networkSecurityGroupId: "",
  operatorsAuthentication: {
    userAssignedIdentities: { controlPlaneOperators: {}, serviceManagedIdentity: "" },
  },
};

/** The spec fields the adopted settings become, as the frontend maps them today. */
function specOf(cluster: HcpCluster, adopt: Partial<ClusterProperties>): Partial<HcpCluster["spec"]> {
  // Only the adopted fields are taken: the rest of the mapping (names, Azure) needs no real ID.
  const id = { kind: "cluster" as const, subscriptionId: "", resourceGroup: "", cluster: "" };
  const platform = { ...NO_PLATFORM, ...adopt.platform };
  const resource = { id: "", name: "", type: "", location: "", properties: { ...adopt, platform } };
  const mapped = clusterToCR(resource, { id, namespace: "", name: "", annotations: {} }).spec;
  const cidrs = mapped.api?.authorizedCIDRs;
  const vnetIntegrationSubnetId = mapped.platform.azure.vnetIntegrationSubnetId;
  return {
    ...(cidrs ? { api: { ...cluster.spec.api, authorizedCIDRs: cidrs } } : {}),
    ...(vnetIntegrationSubnetId
      ? { platform: { azure: { ...cluster.spec.platform.azure, vnetIntegrationSubnetId } } }
      : {}),
    ...(mapped.autoscaling ? { autoscaling: mapped.autoscaling } : {}),
    ...(mapped.imageDigestMirrors ? { imageDigestMirrors: mapped.imageDigestMirrors } : {}),
    ...(mapped.etcd ? { etcd: mapped.etcd } : {}),
  };
}

/** Moves every cluster's adoptable settings into its spec; returns how many clusters it changed. */
export async function adoptSettings(client: KubeClient, log: Logger): Promise<number> {
  const clusters = await client.listAll<HcpCluster>(HcpClusterResource);
  let adopted = 0;
  for (const cluster of clusters.items) {
    const found = settingsToAdopt(parseJson(cluster.metadata.annotations?.[ARM_ANNOTATIONS.properties]));
    if (!found || cluster.metadata.deletionTimestamp) continue;
    const ref = { name: cluster.metadata.name ?? "", namespace: cluster.metadata.namespace ?? "" };
    try {
      await client.mergePatch(HcpClusterResource, ref, {
        metadata: {
          resourceVersion: cluster.metadata.resourceVersion,
          annotations: { [ARM_ANNOTATIONS.properties]: JSON.stringify(found.rest) },
        },
        spec: specOf(cluster, found.adopt),
      });
      adopted++;
      log.info("Moved a cluster's settings from its ARM annotation into its spec", {
        ...ref,
        settings: Object.keys(found.adopt),
      });
    } catch (err) {
      // Another replica moved them first; or the apiserver refuses a value it now checks, which
      // stays where it was, not in effect, and GET does not show it: the customer sets it again.
      if (err instanceof KubeApiError && err.code === 409) continue;
      log.error("Could not move a cluster's settings into its spec", err, ref);
    }
  }
  return adopted;
}
