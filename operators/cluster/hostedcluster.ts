/**
 * The ManifestWork that carries one HcpCluster to its management cluster: the namespace
 * `ocm-<env>-<clusterID>`, the pull secret and the HyperShift HostedCluster, with feedback rules
 * that bring back the HostedCluster's conditions, version and endpoint. Names follow ARO HCP
 * (HostedCluster = the DNS prefix; its namespace from the environment and cluster ID).
 */
import { createHash } from "node:crypto";
import {
  HOSTED_CLUSTER_KIND,
  HYPERSHIFT_API_VERSION,
  HostedClusterResource,
  type HostedCluster,
} from "../api/hypershift/v1beta1.ts";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { DEFAULT_NETWORK } from "../api/v1alpha1/index.ts";
import {
  ManifestWorkResource,
  WORK_API_VERSION,
  type FeedbackValue,
  type Manifest,
  type ManifestWork,
} from "../api/work/v1.ts";
import type { Release } from "../releases/catalog.ts";

export const PULL_SECRET_NAME = "pull-secret";

/** Labels on every ManifestWork a cluster owns; they map a work back to its HcpCluster. */
export const LABELS = {
  clusterUid: "hcp.aro.dev/cluster-uid",
  clusterName: "hcp.aro.dev/cluster-name",
  clusterNamespace: "hcp.aro.dev/cluster-namespace",
  nodePool: "hcp.aro.dev/nodepool",
} as const;

/** What the service knows beyond the HcpCluster itself. */
export interface RegionSettings {
  /** ARO HCP's envIdentifier, e.g. "arohcpint"; names the management-cluster namespaces. */
  environment: string;
  /** The region's parent zone, used when the cluster names none. */
  baseDomain: string;
  /** Key Vault that holds the managed identities' credentials on the management clusters. */
  managedIdentitiesKeyVault: string;
  /** `.dockerconfigjson` for the release images. */
  pullSecret: string;
}

export interface ClusterNames {
  clusterID: string;
  hostedClusterName: string;
  hostedClusterNamespace: string;
  controlPlaneNamespace: string;
  baseDomain: string;
  /** `<prefix>.<baseDomain>`: the customer DNS zone. */
  zoneName: string;
  apiHost: string;
  consoleURL: string;
  workName: string;
}

/** Every name derived from the cluster; the clusterID is the HcpCluster's uid, stable across restarts. */
export function clusterNames(cluster: HcpCluster, region: RegionSettings): ClusterNames {
  const clusterID = cluster.metadata.uid ?? "";
  const prefix = cluster.spec.dns.baseDomainPrefix;
  const baseDomain = cluster.spec.dns.baseDomain ?? region.baseDomain;
  const hostedClusterNamespace = `ocm-${region.environment}-${clusterID}`;
  const zoneName = `${prefix}.${baseDomain}`;
  return {
    clusterID,
    hostedClusterName: prefix,
    hostedClusterNamespace,
    controlPlaneNamespace: `${hostedClusterNamespace}-${prefix}`,
    baseDomain,
    zoneName,
    apiHost: `api.${zoneName}`,
    consoleURL: `https://console-openshift-console.apps.${zoneName}`,
    workName: clusterID,
  };
}

/**
 * ARM request IDs the frontend stamps on a CR; carried onto its ManifestWork so that one request
 * can be followed from the ARM call to the management cluster.
 */
export const REQUEST_ID_ANNOTATIONS = [
  "hcp.aro.dev/correlation-request-id",
  "hcp.aro.dev/client-request-id",
] as const;

export function requestIdAnnotations(obj: {
  metadata: { annotations?: Record<string, string> };
}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of REQUEST_ID_ANNOTATIONS) {
    const value = obj.metadata.annotations?.[key];
    if (value) out[key] = value;
  }
  return out;
}

export function workLabels(cluster: HcpCluster): Record<string, string> {
  return {
    [LABELS.clusterUid]: cluster.metadata.uid ?? "",
    [LABELS.clusterName]: cluster.metadata.name ?? "",
    [LABELS.clusterNamespace]: cluster.metadata.namespace ?? "",
  };
}

/**
 * A UUID derived from an identity's ARM ID. The real service reads the client ID from the managed
 * identity in Azure; Microsoft.ManagedIdentity is outside this region's emulator, so a stable
 * stand-in keeps the HostedCluster valid and the same on every reconcile.
 */
export function identityClientId(resourceId: string): string {
  const h = createHash("sha256").update(resourceId.toLowerCase()).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/x` → the vnet's ID. */
export function vnetIdOf(subnetId: string): string {
  return subnetId.replace(/\/subnets\/[^/]+$/i, "");
}

function identityRef(name: string) {
  return { credentialsSecretName: name, objectEncoding: "utf-8" as const };
}

/** A typed object as a work manifest (which needs apiVersion and kind set). */
export function asManifest(obj: { apiVersion?: string; kind?: string; metadata: object }): Manifest {
  if (!obj.apiVersion || !obj.kind) throw new Error("a manifest needs apiVersion and kind");
  return obj as unknown as Manifest;
}

/** The HyperShift HostedCluster (the real CRD's Azure + ManagedIdentities shape). */
export function hostedClusterManifest(
  cluster: HcpCluster,
  names: ClusterNames,
  release: Release,
  region: RegionSettings,
): HostedCluster {
  const azure = cluster.spec.platform.azure;
  const net = { ...DEFAULT_NETWORK, ...cluster.spec.network };
  const operators = azure.identities.controlPlaneOperators;
  const dataPlane = azure.identities.dataPlaneOperators ?? {};
  const clientIdOf = (id: string | undefined) =>
    id ? identityClientId(id) : identityClientId(names.clusterID);
  const route = (service: "OAuthServer" | "Konnectivity" | "Ignition") => ({
    service,
    servicePublishingStrategy: { type: "Route" as const },
  });
  const [major = "4", minor = "0"] = release.version.split(".");
  return {
    apiVersion: HYPERSHIFT_API_VERSION,
    kind: HOSTED_CLUSTER_KIND,
    metadata: {
      name: names.hostedClusterName,
      namespace: names.hostedClusterNamespace,
      labels: {
        "api.openshift.com/id": names.clusterID,
        "api.openshift.com/name": cluster.metadata.name ?? "",
        "api.openshift.com/environment": region.environment,
      },
    },
    spec: {
      clusterID: names.clusterID,
      infraID: `${names.hostedClusterName}-${names.clusterID.slice(0, 8)}`,
      release: { image: release.image },
      channel: `${cluster.spec.version.channelGroup ?? "stable"}-${major}.${minor}`,
      pullSecret: { name: PULL_SECRET_NAME },
      dns: { baseDomain: names.baseDomain, baseDomainPrefix: names.hostedClusterName },
      kubeAPIServerDNSName: names.apiHost,
      networking: {
        networkType: net.networkType,
        clusterNetwork: [{ cidr: net.podCidr, hostPrefix: net.hostPrefix }],
        serviceNetwork: [{ cidr: net.serviceCidr }],
        machineNetwork: [{ cidr: net.machineCidr }],
      },
      etcd: {
        managementType: "Managed",
        managed: { storage: { type: "PersistentVolume", persistentVolume: { size: "8Gi" } } },
      },
      services: [
        {
          service: "APIServer",
          servicePublishingStrategy: { type: "Route", route: { hostname: names.apiHost } },
        },
        route("OAuthServer"),
        route("Konnectivity"),
        route("Ignition"),
      ],
      platform: {
        type: "Azure",
        azure: {
          location: azure.location,
          resourceGroup: azure.managedResourceGroup,
          vnetID: vnetIdOf(azure.subnetId),
          subnetID: azure.subnetId,
          subscriptionID: azure.subscriptionId,
          securityGroupID: azure.networkSecurityGroupId,
          tenantID: azure.tenantId ?? "",
          topology: cluster.spec.api?.visibility === "Private" ? "Private" : "Public",
          ...(cluster.spec.api?.visibility === "Private" ? { private: { type: "PrivateLink" } } : {}),
          azureAuthenticationConfig: {
            azureAuthenticationConfigType: "ManagedIdentities",
            managedIdentities: {
              controlPlane: {
                managedIdentitiesKeyVault: {
                  name: region.managedIdentitiesKeyVault,
                  tenantID: azure.tenantId ?? "",
                },
                cloudProvider: identityRef(`${names.hostedClusterName}-cloud-provider`),
                nodePoolManagement: identityRef(`${names.hostedClusterName}-nodepool-mgmt`),
                controlPlaneOperator: identityRef(`${names.hostedClusterName}-cpo`),
                ingress: identityRef(`${names.hostedClusterName}-ingress`),
                network: identityRef(`${names.hostedClusterName}-network`),
                disk: identityRef(`${names.hostedClusterName}-disk`),
                file: identityRef(`${names.hostedClusterName}-file`),
                ...(operators["image-registry"]
                  ? { imageRegistry: identityRef(`${names.hostedClusterName}-image-registry`) }
                  : {}),
              },
              dataPlane: {
                diskMSIClientID: clientIdOf(dataPlane["disk-csi-driver"]),
                fileMSIClientID: clientIdOf(dataPlane["file-csi-driver"]),
                imageRegistryMSIClientID: clientIdOf(dataPlane["image-registry"]),
              },
            },
          },
        },
      },
    },
  };
}

/**
 * Feedback the cluster controller reads. Each value is small on purpose: OCM's agent refuses raw
 * JSON values over 1 KiB, and a HostedCluster's whole condition list is larger than that.
 */
export const FEEDBACK = {
  available: "available",
  progressing: "progressing",
  degraded: "degraded",
  completedVersion: "completedVersion",
  latestUpdate: "latestUpdate",
  endpointHost: "endpointHost",
  endpointPort: "endpointPort",
} as const;

const conditionPath = (type: string) => `.status.conditions[?(@.type=="${type}")]`;

const hostedClusterFeedbackPaths = [
  { name: FEEDBACK.available, path: conditionPath("Available") },
  { name: FEEDBACK.progressing, path: conditionPath("Progressing") },
  { name: FEEDBACK.degraded, path: conditionPath("Degraded") },
  // History is newest first: the first Completed entry is the version running now.
  {
    name: FEEDBACK.completedVersion,
    path: '.status.controlPlaneVersion.history[?(@.state=="Completed")].version',
  },
  { name: FEEDBACK.latestUpdate, path: ".status.controlPlaneVersion.history[0]" },
  { name: FEEDBACK.endpointHost, path: ".status.controlPlaneEndpoint.host" },
  { name: FEEDBACK.endpointPort, path: ".status.controlPlaneEndpoint.port" },
];

export function hostedClusterWork(
  cluster: HcpCluster,
  names: ClusterNames,
  release: Release,
  region: RegionSettings,
  consumer: string,
): ManifestWork {
  const namespace: Manifest = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: names.hostedClusterNamespace, labels: { "api.openshift.com/id": names.clusterID } },
  };
  const pullSecret: Manifest = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: PULL_SECRET_NAME, namespace: names.hostedClusterNamespace },
    type: "kubernetes.io/dockerconfigjson",
    data: { ".dockerconfigjson": Buffer.from(region.pullSecret).toString("base64") },
  };
  return {
    apiVersion: WORK_API_VERSION,
    kind: ManifestWorkResource.kind,
    metadata: {
      name: names.workName,
      namespace: consumer,
      labels: workLabels(cluster),
      annotations: requestIdAnnotations(cluster),
    },
    spec: {
      workload: {
        manifests: [
          namespace,
          pullSecret,
          asManifest(hostedClusterManifest(cluster, names, release, region)),
        ],
      },
      deleteOption: { propagationPolicy: "Foreground" },
      manifestConfigs: [
        {
          resourceIdentifier: {
            group: HostedClusterResource.group,
            resource: HostedClusterResource.plural,
            name: names.hostedClusterName,
            namespace: names.hostedClusterNamespace,
          },
          updateStrategy: {
            type: "ServerSideApply",
            serverSideApply: { force: true, fieldManager: "work-agent" },
          },
          feedbackRules: [
            {
              type: "JSONPaths",
              jsonPaths: hostedClusterFeedbackPaths,
            },
          ],
        },
      ],
    },
  };
}

/** The feedback values of one manifest of a work, raw JSON parsed; undefined where absent. */
export function feedbackOf(
  work: ManifestWork | undefined,
  match: { kind: string; name: string },
): Record<string, unknown> {
  const manifest = work?.status?.resourceStatus?.manifests?.find(
    (m) => m.resourceMeta.kind === match.kind && m.resourceMeta.name === match.name,
  );
  const out: Record<string, unknown> = {};
  for (const v of manifest?.statusFeedback?.values ?? []) out[v.name] = fieldValueOf(v);
  return out;
}

function fieldValueOf(v: FeedbackValue): unknown {
  const f = v.fieldValue;
  switch (f.type) {
    case "Integer":
      return f.integer;
    case "String":
      return f.string;
    case "Boolean":
      return f.boolean;
    case "JsonRaw":
      try {
        return JSON.parse(f.jsonRaw ?? "null") as unknown;
      } catch {
        return undefined;
      }
  }
}
