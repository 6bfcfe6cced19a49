/**
 * The cluster's public IP (Standard, static IPv4) and the load balancer whose frontend uses it.
 * Both are long-running in ARM: a call waits a bounded time, then reports "in progress" and the
 * next call resumes the same operation. Updates start from what exists, so fields others set
 * (rules, pools, extra frontends, tags) survive.
 */
import type { LoadBalancer, PublicIPAddress } from "@azure/arm-network";
import type { AzureClients } from "./clients.ts";
import { hasOwnerTags, withOwnerTags, type Owner } from "./ownership.ts";
import { deleteOwned, ensureLro, type DeleteResult, type Outcome } from "./reconcile.ts";
import { sameLocation } from "./resourcegroup.ts";

/** The load balancer frontend this layer manages. */
export const FRONTEND_NAME = "frontend";

export interface NetworkResourceParams {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  owner: Owner;
}

export interface PublicIpParams extends NetworkResourceParams {
  location: string;
}

export interface LoadBalancerParams extends NetworkResourceParams {
  location: string;
  publicIpId: string;
}

function networkId(p: NetworkResourceParams, type: string): string {
  return `/subscriptions/${p.subscriptionId}/resourceGroups/${p.resourceGroup}/providers/Microsoft.Network/${type}/${p.name}`;
}

function lroOptions(
  azure: AzureClients,
  resumeFrom: string | undefined,
): { updateIntervalInMs: number; resumeFrom?: string } {
  return { updateIntervalInMs: azure.config.pollIntervalMs, ...(resumeFrom ? { resumeFrom } : {}) };
}

function desiredPublicIp(p: PublicIpParams, existing: PublicIPAddress | undefined): PublicIPAddress {
  return {
    ...existing,
    location: p.location,
    sku: { name: "Standard", tier: "Regional" },
    publicIPAllocationMethod: "Static",
    publicIPAddressVersion: "IPv4",
    tags: withOwnerTags(existing?.tags, p.owner),
  };
}

/** The public IP; ready once Azure has allocated its address. */
export async function ensurePublicIp(
  azure: AzureClients,
  p: PublicIpParams,
): Promise<Outcome<{ id: string; ipAddress: string }>> {
  const ips = azure.network(p.subscriptionId).publicIPAddresses;
  return ensureLro<PublicIPAddress, { id: string; ipAddress: string }>({
    azure,
    what: `public IP address ${p.resourceGroup}/${p.name}`,
    key: networkId(p, "publicIPAddresses"),
    owner: p.owner,
    get: () => ips.get(p.resourceGroup, p.name),
    tags: (ip) => ip.tags,
    state: (ip) => ip.provisioningState,
    matches: (ip) =>
      hasOwnerTags(ip.tags, p.owner) &&
      sameLocation(ip.location, p.location) &&
      ip.sku?.name === "Standard" &&
      ip.publicIPAllocationMethod === "Static" &&
      ip.publicIPAddressVersion === "IPv4",
    begin: (existing, resumeFrom) =>
      ips.beginCreateOrUpdate(
        p.resourceGroup,
        p.name,
        desiredPublicIp(p, existing),
        lroOptions(azure, resumeFrom),
      ),
    value: (ip) => (ip.id && ip.ipAddress ? { id: ip.id, ipAddress: ip.ipAddress } : undefined),
  });
}

function frontendOf(lb: LoadBalancer): { id?: string; publicIpId?: string } | undefined {
  const fe = lb.frontendIPConfigurations?.find((f) => f.name === FRONTEND_NAME);
  return fe
    ? {
        ...(fe.id ? { id: fe.id } : {}),
        ...(fe.publicIPAddress?.id ? { publicIpId: fe.publicIPAddress.id } : {}),
      }
    : undefined;
}

function desiredLoadBalancer(p: LoadBalancerParams, existing: LoadBalancer | undefined): LoadBalancer {
  const others = (existing?.frontendIPConfigurations ?? []).filter((f) => f.name !== FRONTEND_NAME);
  return {
    ...existing,
    location: p.location,
    sku: { name: "Standard", tier: "Regional" },
    tags: withOwnerTags(existing?.tags, p.owner),
    frontendIPConfigurations: [{ name: FRONTEND_NAME, publicIPAddress: { id: p.publicIpId } }, ...others],
  };
}

/** The load balancer with frontend "frontend" on `publicIpId`. */
export async function ensureLoadBalancer(
  azure: AzureClients,
  p: LoadBalancerParams,
): Promise<Outcome<{ id: string; frontendIpConfigurationId: string }>> {
  const lbs = azure.network(p.subscriptionId).loadBalancers;
  return ensureLro<LoadBalancer, { id: string; frontendIpConfigurationId: string }>({
    azure,
    what: `load balancer ${p.resourceGroup}/${p.name}`,
    key: networkId(p, "loadBalancers"),
    owner: p.owner,
    get: () => lbs.get(p.resourceGroup, p.name),
    tags: (lb) => lb.tags,
    state: (lb) => lb.provisioningState,
    matches: (lb) =>
      hasOwnerTags(lb.tags, p.owner) &&
      sameLocation(lb.location, p.location) &&
      lb.sku?.name === "Standard" &&
      frontendOf(lb)?.publicIpId?.toLowerCase() === p.publicIpId.toLowerCase(),
    begin: (existing, resumeFrom) =>
      lbs.beginCreateOrUpdate(
        p.resourceGroup,
        p.name,
        desiredLoadBalancer(p, existing),
        lroOptions(azure, resumeFrom),
      ),
    value: (lb) => {
      const frontendId = frontendOf(lb)?.id;
      return lb.id && frontendId ? { id: lb.id, frontendIpConfigurationId: frontendId } : undefined;
    },
  });
}

export async function deleteLoadBalancer(
  azure: AzureClients,
  p: NetworkResourceParams,
): Promise<Outcome<DeleteResult>> {
  const lbs = azure.network(p.subscriptionId).loadBalancers;
  return deleteOwned<LoadBalancer>({
    azure,
    what: `load balancer ${p.resourceGroup}/${p.name}`,
    owner: p.owner,
    get: () => lbs.get(p.resourceGroup, p.name),
    tags: (lb) => lb.tags,
    state: (lb) => lb.provisioningState,
    begin: {
      key: networkId(p, "loadBalancers"),
      start: (resumeFrom) => lbs.beginDelete(p.resourceGroup, p.name, lroOptions(azure, resumeFrom)),
    },
  });
}

/** Fails with PublicIPAddressInUse (a user error) while a load balancer still uses the address. */
export async function deletePublicIp(
  azure: AzureClients,
  p: NetworkResourceParams,
): Promise<Outcome<DeleteResult>> {
  const ips = azure.network(p.subscriptionId).publicIPAddresses;
  return deleteOwned<PublicIPAddress>({
    azure,
    what: `public IP address ${p.resourceGroup}/${p.name}`,
    owner: p.owner,
    get: () => ips.get(p.resourceGroup, p.name),
    tags: (ip) => ip.tags,
    state: (ip) => ip.provisioningState,
    begin: {
      key: networkId(p, "publicIPAddresses"),
      start: (resumeFrom) => ips.beginDelete(p.resourceGroup, p.name, lroOptions(azure, resumeFrom)),
    },
  });
}
