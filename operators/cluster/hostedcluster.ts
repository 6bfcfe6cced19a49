/**
 * The ManifestWork that carries one HcpCluster to its management cluster: the namespace
 * `ocm-<env>-<clusterID>`, the pull secret, the service-account signing key (oidc.ts), with a VNet
 * integration subnet its Swift objects (networking.ts), and the
 * HyperShift HostedCluster with its issuer URL and customer-managed etcd keys
 * (etcd-encryption.ts), with feedback rules
 * that bring back the HostedCluster's conditions, version and endpoint, and the key ID the
 * signing key's Secret carries (a rotation's evidence), and the cluster's Velero backup Schedule
 * with its feedback (backup.ts), and while spec.restore asks for one, a Velero Restore with its feedback,
 * the HostedCluster paused until it ends (restore.ts). Names follow ARO HCP
 * (HostedCluster = the DNS prefix; its namespace from the environment and cluster ID).
 */
import {
  HOSTED_CLUSTER_KIND,
  HYPERSHIFT_API_VERSION,
  HostedClusterResource,
  type HostedCluster,
} from "../api/hypershift/v1beta1/index.ts";
import type { ExternalAuth, HcpCluster } from "../api/v1alpha1/index.ts";
import { DEFAULT_NETWORK } from "../api/v1alpha1/index.ts";
import type { Manifest, ManifestConfigOption, ManifestWork } from "../api/work/v1.ts";
import {
  HOSTED_CLUSTER_FEEDBACK_PATHS,
  SIGNING_KEY_FEEDBACK_PATHS,
  SIGNING_KEY_ID_ANNOTATION,
} from "../api/v1alpha1/feedback.ts";
import { identityClientId } from "../hcp/identities.ts";
import type { ClusterNames, RegionSettings } from "../api/v1alpha1/clusternames.ts";
import { workLabels } from "../api/v1alpha1/labels.ts";
import { requestIdAnnotations } from "../hcp/requests.ts";
import { asManifest, manifestWork } from "../hcp/work.ts";
import { carriedAnnotation } from "../hcp/external-auths.ts";
import { authenticationOf, caConfigMaps, clientSecrets } from "./authentication.ts";
import type { Release } from "../releases/catalog.ts";
import {
  disabledCapabilities,
  ingressOperatorConfiguration,
  swiftMetadata,
  swiftManifests,
} from "./networking.ts";
import { keyId, SIGNING_KEY_SECRET_KEY } from "./signing-keyring.ts";
import { keysAnnotation, secretEncryption, wantedKey, type EtcdKeys } from "./etcd-encryption.ts";
import { backupFeedbackConfig, backupScheduleManifest } from "./backup.ts";
import { restoreFeedbackConfig, restoreManifest, restorePause } from "./restore.ts";

export const PULL_SECRET_NAME = "pull-secret";
/** The Secret of the HostedCluster's namespace that holds the service-account signing key. */
export const SIGNING_KEY_SECRET_NAME = "sa-signing-key";

/** `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/x` → the vnet's ID. */
export function vnetIdOf(subnetId: string): string {
  return subnetId.replace(/\/subnets\/[^/]+$/i, "");
}

function identityRef(name: string) {
  return { credentialsSecretName: name, objectEncoding: "utf-8" as const };
}

/** Azure placement and the managed identities HyperShift's operators run as. */
function azurePlatform(
  cluster: HcpCluster,
  names: ClusterNames,
  region: RegionSettings,
): HostedCluster["spec"]["platform"] {
  const azure = cluster.spec.platform.azure;
  const operators = azure.identities.controlPlaneOperators;
  const dataPlane = azure.identities.dataPlaneOperators ?? {};
  const clientIdOf = (id: string | undefined): string =>
    id ? identityClientId(id) : identityClientId(names.clusterID);
  return {
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
  };
}

/**
 * HyperShift's allowedCIDRBlocks takes CIDR blocks only: a bare address is that one host (/32,
 * /128), and an address given both ways is one entry (the field is a set).
 */
export function allowedCIDRBlocks(authorized: readonly string[] | undefined): string[] | undefined {
  if (!authorized || authorized.length === 0) return undefined;
  const blocks = authorized.map((a) => (a.includes("/") ? a : `${a}/${a.includes(":") ? 128 : 32}`));
  return [...new Set(blocks)];
}

/** HyperShift's cluster autoscaler settings (its provision time a Go duration); none set, none. */
export function hostedAutoscaling(
  a: HcpCluster["spec"]["autoscaling"],
): HostedCluster["spec"]["autoscaling"] | undefined {
  if (!a) return undefined;
  const out = {
    maxNodesTotal: a.maxNodesTotal,
    maxPodGracePeriod: a.maxPodGracePeriodSeconds,
    maxNodeProvisionTime:
      a.maxNodeProvisionTimeSeconds === undefined ? undefined : `${a.maxNodeProvisionTimeSeconds}s`,
    podPriorityThreshold: a.podPriorityThreshold,
  };
  const set = Object.entries(out).filter(([, v]) => v !== undefined);
  return set.length > 0 ? Object.fromEntries(set) : undefined;
}

/**
 * What the user chose besides networking: FIPS, the image registry and the ingress (capabilities
 * and the ingress operator, networking.ts), the autoscaler, image mirrors; each field only when set
 * (the first three are immutable on both sides).
 */
function userSettings(cluster: HcpCluster): Partial<HostedCluster["spec"]> {
  const { fips, imageDigestMirrors } = cluster.spec;
  const autoscaling = hostedAutoscaling(cluster.spec.autoscaling);
  const disabled = disabledCapabilities(cluster);
  const operatorConfiguration = ingressOperatorConfiguration(cluster);
  return {
    ...(cluster.spec.controllerAvailabilityPolicy === "SingleReplica"
      ? { controllerAvailabilityPolicy: "SingleReplica" as const }
      : {}),
    ...(fips ? { fips: true } : {}),
    ...(disabled ? { capabilities: { disabled } } : {}),
    ...(operatorConfiguration ? { operatorConfiguration } : {}),
    ...(autoscaling ? { autoscaling } : {}),
    ...(imageDigestMirrors?.length
      ? { imageContentSources: imageDigestMirrors.map((m) => ({ source: m.source, mirrors: m.mirrors })) }
      : {}),
  };
}

/**
 * The keys spec.secretEncryption carries: `planned` (a rotation's, etcd-encryption.ts planKeys),
 * else the spec's key alone; none while the platform's keys encrypt etcd.
 */
function etcdKeysOf(cluster: HcpCluster, planned: EtcdKeys | undefined): EtcdKeys | undefined {
  if (planned) return planned;
  const wanted = wantedKey(cluster);
  return wanted ? { active: wanted.key } : undefined;
}

/** The HyperShift HostedCluster (the real CRD's Azure + ManagedIdentities shape). */
export function hostedClusterManifest(
  cluster: HcpCluster,
  names: ClusterNames,
  release: Release,
  {
    region,
    issuerURL,
    etcdKeys,
  }: { region: RegionSettings; issuerURL: string; etcdKeys?: EtcdKeys | undefined },
): HostedCluster {
  const net = { ...DEFAULT_NETWORK, ...cluster.spec.network };
  const route = (service: "OAuthServer" | "Konnectivity" | "Ignition") => ({
    service,
    servicePublishingStrategy: { type: "Route" as const },
  });
  const [major = "4", minor = "0"] = release.version.split(".");
  const allowed = allowedCIDRBlocks(cluster.spec.api?.authorizedCIDRs);
  const keys = etcdKeysOf(cluster, etcdKeys);
  const kms = cluster.spec.etcd?.dataEncryption?.customerManaged?.kms;
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
      ...swiftMetadata(cluster),
    },
    spec: {
      clusterID: names.clusterID,
      ...restorePause(cluster, names),
      infraID: `${names.hostedClusterName}-${names.clusterID.slice(0, 8)}`,
      release: { image: release.image },
      channel: `${cluster.spec.version.channelGroup ?? "stable"}-${major}.${minor}`,
      pullSecret: { name: PULL_SECRET_NAME },
      issuerURL,
      serviceAccountSigningKey: { name: SIGNING_KEY_SECRET_NAME },
      dns: { baseDomain: names.baseDomain, baseDomainPrefix: names.hostedClusterName },
      kubeAPIServerDNSName: names.apiHost,
      networking: {
        networkType: net.networkType,
        clusterNetwork: [{ cidr: net.podCidr, hostPrefix: net.hostPrefix }],
        serviceNetwork: [{ cidr: net.serviceCidr }],
        machineNetwork: [{ cidr: net.machineCidr }],
        ...(allowed ? { apiServer: { allowedCIDRBlocks: allowed } } : {}),
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
      platform: azurePlatform(cluster, names, region),
      ...(keys
        ? {
            secretEncryption: secretEncryption(
              keys,
              { visibility: kms?.visibility },
              names.hostedClusterName,
            ),
          }
        : {}),
      ...userSettings(cluster),
    },
  };
}

/** The HostedCluster with the ExternalAuths' OIDC providers; without any, OpenShift's own OAuth. */
export function withAuthentication(hc: HostedCluster, externalAuths: readonly ExternalAuth[]): HostedCluster {
  const authentication = authenticationOf(externalAuths);
  if (!authentication) return hc;
  return { ...hc, spec: { ...hc.spec, configuration: { ...hc.spec.configuration, authentication } } };
}

/** What a cluster's work is built from. */
export interface ClusterWorkInput {
  cluster: HcpCluster;
  names: ClusterNames;
  release: Release;
  region: RegionSettings;
  /** The consumer of the management cluster the cluster is placed on. */
  consumer: string;
  /** The cluster's OIDC issuer URL and its service-account signing key (PEM). */
  oidc: { issuerURL: string; signingKey: string };
  /** The ExternalAuths the HostedCluster carries (externalAuthsCarried). */
  externalAuths?: readonly ExternalAuth[];
  /** The etcd keys the HostedCluster carries (etcd-encryption.ts planKeys); default: the spec's. */
  etcdKeys?: EtcdKeys;
}

export function hostedClusterWork({
  cluster,
  names,
  release,
  region,
  consumer,
  oidc,
  externalAuths = [],
  etcdKeys,
}: ClusterWorkInput): ManifestWork {
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
  const signingKey: Manifest = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: SIGNING_KEY_SECRET_NAME,
      namespace: names.hostedClusterNamespace,
      annotations: { [SIGNING_KEY_ID_ANNOTATION]: keyId(oidc.signingKey) },
    },
    type: "Opaque",
    data: { [SIGNING_KEY_SECRET_KEY]: Buffer.from(oidc.signingKey).toString("base64") },
  };
  const keys = etcdKeysOf(cluster, etcdKeys);
  const hostedCluster = hostedClusterManifest(cluster, names, release, {
    region,
    issuerURL: oidc.issuerURL,
    etcdKeys: keys,
  });
  const work = manifestWork({
    name: names.workName,
    consumer,
    labels: workLabels(cluster),
    annotations: {
      ...requestIdAnnotations(cluster),
      ...carriedAnnotation(externalAuths),
      ...keysAnnotation(keys),
    },
    manifests: [
      namespace,
      pullSecret,
      signingKey,
      ...swiftManifests(cluster, names),
      ...caConfigMaps(externalAuths, names.hostedClusterNamespace),
      ...clientSecrets(externalAuths, names.hostedClusterNamespace),
      asManifest(withAuthentication(hostedCluster, externalAuths)),
      asManifest(backupScheduleManifest(cluster, names)),
      ...[restoreManifest(cluster, names)].filter((r) => r !== undefined).map(asManifest),
    ],
    feedback: {
      type: HostedClusterResource,
      name: names.hostedClusterName,
      namespace: names.hostedClusterNamespace,
      paths: HOSTED_CLUSTER_FEEDBACK_PATHS,
    },
  });
  // The Secret's annotation comes back too (never its data): which key the management cluster has.
  const signingKeyFeedback: ManifestConfigOption = {
    resourceIdentifier: {
      group: "",
      resource: "secrets",
      name: SIGNING_KEY_SECRET_NAME,
      namespace: names.hostedClusterNamespace,
    },
    feedbackRules: [{ type: "JSONPaths", jsonPaths: SIGNING_KEY_FEEDBACK_PATHS }],
  };
  const manifestConfigs = [
    ...(work.spec?.manifestConfigs ?? []),
    signingKeyFeedback,
    backupFeedbackConfig(names),
    ...restoreFeedbackConfig(cluster, names),
  ];
  return { ...work, spec: { ...work.spec, manifestConfigs } };
}
