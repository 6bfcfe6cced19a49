/**
 * A node pool's VM size is offered to the subscription in its location and zone, and the
 * subscription's vCPU quota there (its family and total regional vCPUs) covers the nodes a new
 * pool, or a pool that grows, asks for.
 */
import type { NodePoolProperties } from "../api/internal.ts";
import { shorten } from "../api/json.ts";
import type { FieldError } from "../errors.ts";
import { call, collect, NOT_FOUND, sameName, unavailable, type Run } from "./azure-calls.ts";

/** A VM size as Microsoft.Compute/skus lists it (the fields read). */
export interface VmSku {
  resourceType?: string;
  name?: string;
  family?: string;
  locationInfo?: Array<{ location?: string; zones?: string[] }>;
  capabilities?: Array<{ name?: string; value?: string }>;
  restrictions?: Array<{
    type?: string;
    reasonCode?: string;
    restrictionInfo?: { locations?: string[]; zones?: string[] };
  }>;
}

/** A usage line as Microsoft.Compute/locations/{l}/usages lists it. */
export interface VcpuUsage {
  name?: { value?: string; localizedValue?: string };
  currentValue?: number;
  limit?: number;
}

export interface NodePoolCheck {
  subscriptionId: string;
  location: string;
  properties: NodePoolProperties;
  /** The stored properties on an update: only more nodes are checked against the quota. */
  stored?: NodePoolProperties;
}

/** The VM size of a pool in its location and zone: found and usable, or the field errors why not. */
export function checkVmSize(
  skus: VmSku[],
  want: { vmSize: string; location: string; zone?: string | undefined },
): { sku: VmSku } | { errors: FieldError[] } {
  const { vmSize, location, zone } = want;
  const sku = skus.find((s) => sameName(s.resourceType, "virtualMachines") && sameName(s.name, vmSize));
  const info = sku?.locationInfo?.find((l) => sameName(l.location, location));
  const target = "properties.platform.vmSize";
  if (!sku || !info)
    return {
      errors: [
        { target, message: `The VM size '${shorten(vmSize, 64)}' is not offered in location '${location}'` },
      ],
    };
  const restrictions = sku.restrictions ?? [];
  const whole = restrictions.find(
    (r) =>
      sameName(r.type, "Location") && (r.restrictionInfo?.locations ?? []).some((l) => sameName(l, location)),
  );
  if (whole)
    return {
      errors: [
        {
          target,
          message: `The VM size '${vmSize}' is not available to this subscription in location '${location}' (${whole.reasonCode ?? "restricted"})`,
        },
      ],
    };
  if (zone === undefined) return { sku };
  const blocked = new Set(
    restrictions
      .filter((r) => sameName(r.type, "Zone"))
      .filter((r) => (r.restrictionInfo?.locations ?? [location]).some((l) => sameName(l, location)))
      .flatMap((r) => r.restrictionInfo?.zones ?? []),
  );
  const offered = (info.zones ?? []).filter((z) => !blocked.has(z)).sort();
  if (offered.includes(zone)) return { sku };
  const where = offered.length > 0 ? `zones ${offered.join(", ")}` : "no zone";
  return {
    errors: [
      {
        target: "properties.platform.availabilityZone",
        message: `The VM size '${vmSize}' is not offered to this subscription in zone '${shorten(zone, 16)}' of location '${location}' (it is in ${where})`,
      },
    ],
  };
}

/** The vCPUs of one VM of a size. */
export function vcpusOf(sku: VmSku): number {
  const value = Number(sku.capabilities?.find((c) => sameName(c.name, "vCPUs"))?.value);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** The nodes a pool may run: its replicas, or its autoscaling maximum (and the field that says so). */
export function nodesOf(p: NodePoolProperties | undefined): { nodes: number; target: string } {
  const max = p?.autoScaling?.max;
  if (max !== undefined)
    return { nodes: Math.max(max, p?.replicas ?? 0), target: "properties.autoScaling.max" };
  return { nodes: p?.replicas ?? 0, target: "properties.replicas" };
}

/** Field errors for `more` vCPUs of a family the subscription's quota in the location cannot hold. */
export function checkQuota(
  usages: VcpuUsage[],
  want: { family: string; more: number; location: string; target: string; what: string },
): FieldError[] {
  const lines = [want.family, "cores"];
  return lines.flatMap((name) => {
    const usage = usages.find((u) => sameName(u.name?.value, name));
    if (!usage || usage.limit === undefined) return [];
    const current = usage.currentValue ?? 0;
    if (current + want.more <= usage.limit) return [];
    const label = usage.name?.localizedValue ?? name;
    return [
      {
        target: want.target,
        message: `${want.what} needs ${want.more} more vCPUs of '${label}' in location '${want.location}', but the subscription uses ${current} of its quota of ${usage.limit}: ask for a larger quota or fewer nodes`,
      },
    ];
  });
}

/** What a node pool asks of Azure. */
export interface PoolNeeds {
  vmSize: string;
  location: string;
  zone?: string;
  isNew: boolean;
  nodes: number;
  moreNodes: number;
  target: string;
}

/** What a node pool asks of Azure; undefined when nothing (no more nodes than before). */
export function poolNeeds(p: NodePoolCheck): PoolNeeds | undefined {
  const before = p.stored ? nodesOf(p.stored).nodes : 0;
  const after = nodesOf(p.properties);
  const vmSize = p.properties.platform?.vmSize;
  if (!vmSize || (p.stored && after.nodes <= before)) return undefined;
  const zone = p.stored ? undefined : p.properties.platform?.availabilityZone;
  return {
    vmSize,
    location: p.location.toLowerCase().replace(/\s+/g, ""),
    ...(zone !== undefined ? { zone } : {}),
    isNew: !p.stored,
    nodes: after.nodes,
    moreNodes: after.nodes - before,
    target: after.target,
  };
}

/** The VM sizes and vCPU usages of a subscription in a location. */
export async function readCompute(
  run: Run,
  subscriptionId: string,
  location: string,
): Promise<{ skus: VmSku[]; usages: VcpuUsage[] }> {
  const compute = run.clients.compute(subscriptionId);
  const [skus, usages] = await Promise.all([
    call(run, "list Microsoft.Compute/skus", () =>
      collect(compute.resourceSkus.list({ filter: `location eq '${location}'`, abortSignal: run.signal })),
    ),
    call(run, "list Microsoft.Compute/locations/usages", () =>
      collect(compute.usage.list(location, { abortSignal: run.signal })),
    ),
  ]);
  if (skus === NOT_FOUND || usages === NOT_FOUND) throw unavailable(undefined);
  return { skus, usages };
}

/** The field errors of a node pool's VM size and quota, as Azure lists them. */
export function poolErrors(want: PoolNeeds, compute: { skus: VmSku[]; usages: VcpuUsage[] }): FieldError[] {
  const found = checkVmSize(compute.skus, want);
  // A pool that grows keeps its size and zone: Azure may have stopped offering them since.
  if ("errors" in found) return want.isNew ? found.errors : [];
  return checkQuota(compute.usages, {
    family: found.sku.family ?? "",
    more: want.moreNodes * vcpusOf(found.sku),
    location: want.location,
    target: want.target,
    what: `The node pool (${want.nodes} × ${want.vmSize})`,
  });
}
