/**
 * The cluster's public IP (Standard, static IPv4) and the load balancer whose frontend uses it, or
 * whose frontend is a private address in a subnet (Azure picks it). Both are long-running in ARM:
 * a call waits a bounded time, then reports "in progress" and the next call resumes the same
 * operation. Updates start from what exists, so fields others set (rules, pools, extra frontends,
 * tags) survive.
 */
import type { LoadBalancer, PublicIPAddress } from "@azure/arm-network";
import type { AzureCallOptions } from "./cancel.ts";
import type { AzureClients } from "./clients.ts";
import { hasOwnerTags, withOwnerTags, type Owner } from "./ownership.ts";
import { deleteOwned, ensureLro, lroOptions, type DeleteResult, type Outcome } from "./reconcile.ts";
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

/** The frontend's address: a public IP's, or a private one Azure gives from a subnet. */
export type FrontendAddress = { publicIpId: string } | { subnetId: string };

export type LoadBalancerParams = NetworkResourceParams & { location: string } & FrontendAddress;

function networkId(p: NetworkResourceParams, type: string): string {
  return `/subscriptions/${p.subscriptionId}/resourceGroups/${p.resourceGroup}/providers/Microsoft.Network/${type}/${p.name}`;
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
  opts: AzureCallOptions = {},
): Promise<Outcome<{ id: string; ipAddress: string }>> {
  const ips = azure.network(p.subscriptionId).publicIPAddresses;
  return ensureLro<PublicIPAddress, { id: string; ipAddress: string }>({
    azure,
    what: `public IP address ${p.resourceGroup}/${p.name}`,
    key: networkId(p, "publicIPAddresses"),
    owner: p.owner,
    signal: opts.signal,
    get: (o) => ips.get(p.resourceGroup, p.name, o),
    tags: (ip) => ip.tags,
    state: (ip) => ip.provisioningState,
    matches: (ip) =>
      hasOwnerTags(ip.tags, p.owner) &&
      sameLocation(ip.location, p.location) &&
      ip.sku?.name === "Standard" &&
      ip.publicIPAllocationMethod === "Static" &&
      ip.publicIPAddressVersion === "IPv4",
    begin: (existing, resumeFrom, o) =>
      ips.beginCreateOrUpdate(
        p.resourceGroup,
        p.name,
        desiredPublicIp(p, existing),
        lroOptions(azure, resumeFrom, o),
      ),
    value: (ip) => (ip.id && ip.ipAddress ? { id: ip.id, ipAddress: ip.ipAddress } : undefined),
  });
}

interface Frontend {
  id?: string;
  publicIpId?: string;
  subnetId?: string;
  privateIpAddress?: string;
}

function frontendOf(lb: LoadBalancer): Frontend | undefined {
  const fe = lb.frontendIPConfigurations?.find((f) => f.name === FRONTEND_NAME);
  return fe
    ? {
        ...(fe.id ? { id: fe.id } : {}),
        ...(fe.publicIPAddress?.id ? { publicIpId: fe.publicIPAddress.id } : {}),
        ...(fe.subnet?.id ? { subnetId: fe.subnet.id } : {}),
        ...(fe.privateIPAddress ? { privateIpAddress: fe.privateIPAddress } : {}),
      }
    : undefined;
}

/** Whether the frontend is the one asked for: on the public IP, or in the subnet with its address. */
function frontendMatches(fe: Frontend | undefined, p: FrontendAddress): boolean {
  const same = (a: string | undefined, b: string): boolean => a?.toLowerCase() === b.toLowerCase();
  if ("publicIpId" in p) return same(fe?.publicIpId, p.publicIpId) && fe?.subnetId === undefined;
  return same(fe?.subnetId, p.subnetId) && fe?.publicIpId === undefined && !!fe?.privateIpAddress;
}

function desiredLoadBalancer(p: LoadBalancerParams, existing: LoadBalancer | undefined): LoadBalancer {
  const others = (existing?.frontendIPConfigurations ?? []).filter((f) => f.name !== FRONTEND_NAME);
  const frontend =
    "publicIpId" in p
      ? { name: FRONTEND_NAME, publicIPAddress: { id: p.publicIpId } }
      : { name: FRONTEND_NAME, subnet: { id: p.subnetId }, privateIPAllocationMethod: "Dynamic" };
  return {
    ...existing,
    location: p.location,
    sku: { name: "Standard", tier: "Regional" },
    tags: withOwnerTags(existing?.tags, p.owner),
    frontendIPConfigurations: [frontend, ...others],
  };
}

export interface LoadBalancerReady {
  id: string;
  frontendIpConfigurationId: string;
  /** A frontend in a subnet: the private address Azure gave it. */
  privateIpAddress?: string;
}

/** The load balancer with frontend "frontend" on `publicIpId`, or in `subnetId`. */
export async function ensureLoadBalancer(
  azure: AzureClients,
  p: LoadBalancerParams,
  opts: AzureCallOptions = {},
): Promise<Outcome<LoadBalancerReady>> {
  const lbs = azure.network(p.subscriptionId).loadBalancers;
  return ensureLro<LoadBalancer, LoadBalancerReady>({
    azure,
    what: `load balancer ${p.resourceGroup}/${p.name}`,
    key: networkId(p, "loadBalancers"),
    owner: p.owner,
    signal: opts.signal,
    get: (o) => lbs.get(p.resourceGroup, p.name, o),
    tags: (lb) => lb.tags,
    state: (lb) => lb.provisioningState,
    matches: (lb) =>
      hasOwnerTags(lb.tags, p.owner) &&
      sameLocation(lb.location, p.location) &&
      lb.sku?.name === "Standard" &&
      frontendMatches(frontendOf(lb), p),
    begin: (existing, resumeFrom, o) =>
      lbs.beginCreateOrUpdate(
        p.resourceGroup,
        p.name,
        desiredLoadBalancer(p, existing),
        lroOptions(azure, resumeFrom, o),
      ),
    value: (lb) => {
      const fe = frontendOf(lb);
      if (!lb.id || !fe?.id) return undefined;
      const privateIp = fe.privateIpAddress ? { privateIpAddress: fe.privateIpAddress } : {};
      return { id: lb.id, frontendIpConfigurationId: fe.id, ...privateIp };
    },
  });
}

export async function deleteLoadBalancer(
  azure: AzureClients,
  p: NetworkResourceParams,
  opts: AzureCallOptions = {},
): Promise<Outcome<DeleteResult>> {
  const lbs = azure.network(p.subscriptionId).loadBalancers;
  return deleteOwned<LoadBalancer>({
    azure,
    what: `load balancer ${p.resourceGroup}/${p.name}`,
    owner: p.owner,
    signal: opts.signal,
    get: (o) => lbs.get(p.resourceGroup, p.name, o),
    tags: (lb) => lb.tags,
    state: (lb) => lb.provisioningState,
    begin: {
      key: networkId(p, "loadBalancers"),
      start: (resumeFrom, o) => lbs.beginDelete(p.resourceGroup, p.name, lroOptions(azure, resumeFrom, o)),
    },
  });
}

/** Fails with PublicIPAddressInUse (a user error) while a load balancer still uses the address. */
export async function deletePublicIp(
  azure: AzureClients,
  p: NetworkResourceParams,
  opts: AzureCallOptions = {},
): Promise<Outcome<DeleteResult>> {
  const ips = azure.network(p.subscriptionId).publicIPAddresses;
  return deleteOwned<PublicIPAddress>({
    azure,
    what: `public IP address ${p.resourceGroup}/${p.name}`,
    owner: p.owner,
    signal: opts.signal,
    get: (o) => ips.get(p.resourceGroup, p.name, o),
    tags: (ip) => ip.tags,
    state: (ip) => ip.provisioningState,
    begin: {
      key: networkId(p, "publicIPAddresses"),
      start: (resumeFrom, o) => ips.beginDelete(p.resourceGroup, p.name, lroOptions(azure, resumeFrom, o)),
    },
  });
}
