/**
 * A cluster of the internal model ⇄ its HcpCluster CR. Properties with a spec field go to the
 * spec; the rest (ARM-only ones, and those no field holds yet) and the envelope (tags, systemData,
 * identity) go to annotations, so GET returns what was sent. Read-only properties come from the
 * CR's status: provisioningState (provisioning-state.ts), API and console URLs, base domain,
 * conditions.
 */
import {
  API_VERSION,
  ARM_ANNOTATIONS,
  type ChannelGroup,
  HCP_CLUSTER_KIND,
  type HcpCluster,
  type KeyManagementMode,
  type KmsEncryptionSpec,
  resourceState,
  type VersionSpec,
} from "../../api/v1alpha1/index.ts";
import {
  checkedProperties,
  INTERNAL_SCHEMAS,
  type ClusterProperties,
  type InternalResource,
} from "../api/internal.ts";
import { project } from "../api/schema-walks.ts";
import { defaultDnsPrefix, defaultManagedResourceGroup } from "./names.ts";
import { wantsSingleReplica } from "../checks/preview-features.ts";
import { normalizeLocation, type ResourceId } from "../resource-id.ts";
import {
  armConditions,
  armOnly,
  compact,
  envelopeOf,
  metadataFor,
  parseJson,
  set,
  type ToCRContext,
} from "./common.ts";

/** Properties with a spec field or computed from status; everything else is kept in an annotation. */
const CLUSTER_MAPPED = [
  "provisioningState",
  "version",
  "dns.baseDomainPrefix",
  "dns.baseDomain",
  "network",
  "console",
  "api.url",
  "api.visibility",
  "api.authorizedCidrs",
  "ingress.type",
  "platform.managedResourceGroup",
  "platform.subnetId",
  "platform.vnetIntegrationSubnetId",
  "platform.networkSecurityGroupId",
  "platform.outboundType",
  "platform.operatorsAuthentication",
  "platform.issuerUrl",
  "nodeDrainTimeoutMinutes",
  "cryptoRestrictions",
  "clusterImageRegistry",
  "imageDigestMirrors",
  "autoscaling",
  "etcd",
  "status",
];

/** Fills the defaults the service picks (not the schema): DNS prefix and managed resource group. */
export function defaultClusterProperties(id: ResourceId, properties: ClusterProperties): ClusterProperties {
  const out = structuredClone(properties);
  if (out.dns?.baseDomainPrefix === undefined)
    out.dns = {
      ...out.dns,
      baseDomainPrefix: defaultDnsPrefix(id.cluster),
    };
  if (out.platform?.managedResourceGroup === undefined)
    out.platform = {
      ...out.platform,
      managedResourceGroup: defaultManagedResourceGroup(id.subscriptionId, id.resourceGroup, id.cluster),
    };
  return out;
}

/**
 * ARM takes any channel group name (32 characters at most); the CRD's enum refuses those it does
 * not know, naming the field, so the value goes to the CR as sent.
 */
const channelGroup = (name: string | undefined): ChannelGroup | undefined => name as ChannelGroup | undefined;

export function versionSpec(v: { id?: string; channelGroup?: string } | undefined): VersionSpec {
  return compact({ id: v?.id ?? "", channelGroup: channelGroup(v?.channelGroup) });
}

function clusterAzure(
  res: InternalResource<ClusterProperties>,
  ctx: ToCRContext,
): HcpCluster["spec"]["platform"]["azure"] {
  const platform = res.properties.platform ?? {};
  return compact({
    subscriptionId: ctx.id.subscriptionId,
    tenantId: ctx.tenantId,
    location: normalizeLocation(res.location),
    managedResourceGroup: platform.managedResourceGroup ?? "",
    subnetId: platform.subnetId ?? "",
    vnetIntegrationSubnetId: platform.vnetIntegrationSubnetId,
    networkSecurityGroupId: platform.networkSecurityGroupId ?? "",
    outboundType: platform.outboundType,
    identities: identitiesSpec(platform.operatorsAuthentication?.userAssignedIdentities ?? {}),
  });
}

type ArmIdentities = NonNullable<
  NonNullable<NonNullable<ClusterProperties["platform"]>["operatorsAuthentication"]>["userAssignedIdentities"]
>;

function identitiesSpec(identities: ArmIdentities): HcpCluster["spec"]["platform"]["azure"]["identities"] {
  return compact({
    controlPlaneOperators: identities.controlPlaneOperators ?? {},
    dataPlaneOperators: identities.dataPlaneOperators,
    serviceManagedIdentity: identities.serviceManagedIdentity ?? "",
  });
}

type ArmDataEncryption = NonNullable<NonNullable<ClusterProperties["etcd"]>["dataEncryption"]>;
type ArmKms = NonNullable<NonNullable<ArmDataEncryption["customerManaged"]>["kms"]>;

/** Required fields ARM's schema already demanded; an empty one is refused by the CRD, naming it. */
function kmsSpec(kms: ArmKms | undefined): KmsEncryptionSpec {
  return compact({
    vaultName: kms?.vaultName ?? "",
    visibility: kms?.visibility,
    activeKey: { name: kms?.activeKey?.name ?? "", version: kms?.activeKey?.version ?? "" },
  });
}

/** ARM's etcd encryption is the spec's, field for field (the vault at the hub's place). */
function etcdSpec(etcd: ClusterProperties["etcd"]): HcpCluster["spec"]["etcd"] {
  const encryption = etcd?.dataEncryption;
  if (!encryption) return undefined;
  const customer = encryption.customerManaged;
  return {
    dataEncryption: compact({
      // ARM's modes are the CRD's enum (2026-06-30-preview's one among them).
      keyManagementMode: (encryption.keyManagementMode ?? "PlatformManaged") as KeyManagementMode,
      customerManaged: customer
        ? compact({ encryptionType: customer.encryptionType, kms: kmsSpec(customer.kms) })
        : undefined,
    }),
  };
}

export function clusterToCR(res: InternalResource<ClusterProperties>, ctx: ToCRContext): HcpCluster {
  const p = res.properties;
  const spec: HcpCluster["spec"] = compact({
    version: versionSpec(p.version),
    dns: { baseDomainPrefix: p.dns?.baseDomainPrefix ?? "" },
    network: p.network ? compact({ ...p.network }) : undefined,
    api: compact({ visibility: p.api?.visibility, authorizedCIDRs: p.api?.authorizedCidrs }),
    ingress: ingressSpec(p.ingress),
    platform: { azure: clusterAzure(res, ctx) },
    nodeDrainTimeoutMinutes: p.nodeDrainTimeoutMinutes,
    fips: p.cryptoRestrictions === undefined ? undefined : p.cryptoRestrictions === "FIPS",
    clusterImageRegistry: p.clusterImageRegistry ? compact({ ...p.clusterImageRegistry }) : undefined,
    autoscaling: p.autoscaling ? compact({ ...p.autoscaling }) : undefined,
    imageDigestMirrors: p.imageDigestMirrors?.map((m) => ({
      source: m.source ?? "",
      mirrors: m.mirrors ?? [],
    })),
    etcd: etcdSpec(p.etcd),
    // Admitted by preview-features.ts; the tag itself stays in the envelope, for GET.
    controllerAvailabilityPolicy: wantsSingleReplica(res.tags) ? "SingleReplica" : undefined,
  });
  return {
    apiVersion: API_VERSION,
    kind: HCP_CLUSTER_KIND,
    metadata: metadataFor(
      res,
      ctx,
      armOnly(p, CLUSTER_MAPPED),
      compact({ imageDigestMirrors: p.imageDigestMirrors }),
    ),
    spec,
  };
}

/** ARM's ingress types are the CRD's (the schema's enum checked the value). */
function ingressSpec(ingress: ClusterProperties["ingress"]): HcpCluster["spec"]["ingress"] {
  return ingress?.type === undefined ? undefined : { type: ingress.type };
}

/** `https://api.<prefix>.<baseDomain>:443` → `<baseDomain>` (B.7). */
function baseDomainOf(apiURL: string | undefined, prefix: string): string | undefined {
  if (!apiURL) return undefined;
  const host = URL.canParse(apiURL) ? new URL(apiURL).hostname : "";
  const lead = `api.${prefix}.`;
  return host.startsWith(lead) ? host.slice(lead.length) : undefined;
}

/** ARM's cryptoRestrictions of a spec.fips (which stored objects always have: the CRD defaults it). */
function cryptoRestrictions(fips: boolean | undefined): "FIPS" | "None" | undefined {
  if (fips === undefined) return undefined;
  return fips ? "FIPS" : "None";
}

export function clusterFromCR(cr: HcpCluster): InternalResource<ClusterProperties> {
  // What has a spec field is read from the spec alone: a value left in the annotation by a frontend
  // from before the field existed is not in effect, and GET must not say it is (adopt-settings.ts).
  const p = armOnly(parseJson(cr.metadata.annotations?.[ARM_ANNOTATIONS.properties]), CLUSTER_MAPPED);
  const { spec, status } = cr;
  const azure = spec.platform.azure;
  const state = resourceState(cr);
  set(p, "provisioningState", state.state);
  set(p, "version", compact({ id: spec.version.id, channelGroup: spec.version.channelGroup }));
  set(p, "dns.baseDomainPrefix", spec.dns.baseDomainPrefix);
  set(p, "dns.baseDomain", spec.dns.baseDomain ?? baseDomainOf(status?.apiURL, spec.dns.baseDomainPrefix));
  set(p, "network", spec.network);
  set(p, "console.url", status?.consoleURL);
  set(p, "api.url", status?.apiURL);
  set(p, "api.visibility", spec.api?.visibility);
  set(p, "api.authorizedCidrs", spec.api?.authorizedCIDRs);
  set(p, "ingress.type", spec.ingress?.type);
  set(p, "platform.managedResourceGroup", azure.managedResourceGroup);
  set(p, "platform.subnetId", azure.subnetId);
  set(p, "platform.vnetIntegrationSubnetId", azure.vnetIntegrationSubnetId);
  set(p, "platform.outboundType", azure.outboundType);
  set(p, "platform.networkSecurityGroupId", azure.networkSecurityGroupId);
  set(p, "platform.operatorsAuthentication.userAssignedIdentities", compact({ ...azure.identities }));
  set(p, "platform.issuerUrl", status?.issuerURL);
  set(p, "nodeDrainTimeoutMinutes", spec.nodeDrainTimeoutMinutes);
  set(p, "cryptoRestrictions", cryptoRestrictions(spec.fips));
  set(p, "clusterImageRegistry.state", spec.clusterImageRegistry?.state);
  set(p, "imageDigestMirrors", spec.imageDigestMirrors);
  set(p, "autoscaling", spec.autoscaling);
  set(p, "etcd", spec.etcd);
  set(p, "status.conditions", armConditions(cr));
  return {
    ...envelopeOf(cr, "cluster", azure.location, azure.tenantId),
    properties: checkedProperties(project(INTERNAL_SCHEMAS.cluster, p) ?? {}),
  };
}
