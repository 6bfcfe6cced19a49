/**
 * Microsoft.Compute's read-only catalogs a resource provider checks a node pool against: the VM
 * sizes offered per location and zone, with the restrictions a subscription has
 * (`/subscriptions/{s}/providers/Microsoft.Compute/skus`, `$filter=location eq '{l}'`), and a
 * subscription's vCPU usage and quota per location (`.../locations/{l}/usages`: total regional
 * vCPUs and one line per VM family). Azure sets both, not the customer, so tests change them
 * through `ArmEmulator.compute` rather than ARM; the defaults offer common sizes in every zone of
 * a few locations and a generous quota.
 */
import type { Target } from "./context.ts";
import { cloudError, ok, type ArmReply, type JsonObject } from "./http.ts";
import { methodNotAllowed } from "./resourcegroups.ts";

/** A VM size and where it is offered: location → its zones (none: offered without zones). */
export interface VmSize {
  name: string;
  /** The quota family, as usages name it, e.g. standardDSv3Family. */
  family: string;
  vCPUs: number;
  memoryGB: number;
  locations: Record<string, string[]>;
}

/**
 * What keeps a size from a subscription: in a whole location, or in some of its zones. Without
 * `subscriptionId`, from every subscription.
 */
export interface SkuRestriction {
  size: string;
  location: string;
  zones?: string[];
  reasonCode?: "NotAvailableForSubscription" | "QuotaId";
  subscriptionId?: string;
}

/** One usage line: `cores` (total regional vCPUs) or a family such as standardDSv3Family. */
export interface VcpuUsage {
  name: string;
  current?: number;
  limit?: number;
}

export const DEFAULT_LOCATIONS = ["eastus", "eastus2", "centralus", "westus3", "westeurope"];
export const DEFAULT_VCPU_LIMIT = 10_000;
export const DEFAULT_FAMILY_LIMIT = 5_000;

const FAMILY_NAMES: Record<string, string> = {
  standardDSv3Family: "Standard DSv3 Family vCPUs",
  standardDSv5Family: "Standard DSv5 Family vCPUs",
  standardDDSv5Family: "Standard DDSv5 Family vCPUs",
  standardESv3Family: "Standard ESv3 Family vCPUs",
  standardEDSv5Family: "Standard EDSv5 Family vCPUs",
};

function everywhere(): Record<string, string[]> {
  return Object.fromEntries(DEFAULT_LOCATIONS.map((l) => [l, ["1", "2", "3"]]));
}

function size(name: string, family: string, vCPUs: number, memoryGB: number): VmSize {
  return { name, family, vCPUs, memoryGB, locations: everywhere() };
}

/** The sizes offered by default: general purpose and memory optimized, common core counts. */
export function defaultVmSizes(): VmSize[] {
  return [
    ...[2, 4, 8, 16, 32].map((n) => size(`Standard_D${n}s_v3`, "standardDSv3Family", n, n * 4)),
    ...[2, 4, 8, 16, 32].map((n) => size(`Standard_D${n}s_v5`, "standardDSv5Family", n, n * 4)),
    ...[4, 8, 16].map((n) => size(`Standard_D${n}ds_v5`, "standardDDSv5Family", n, n * 4)),
    ...[4, 8, 16].map((n) => size(`Standard_E${n}s_v3`, "standardESv3Family", n, n * 8)),
    ...[4, 8, 16].map((n) => size(`Standard_E${n}ds_v5`, "standardEDSv5Family", n, n * 8)),
  ];
}

const usageKey = (subscriptionId: string, location: string, name: string): string =>
  `${subscriptionId}\n${location}\n${name}`.toLowerCase();

export class ComputeCatalog {
  readonly #sizes = new Map<string, VmSize>();
  #restrictions: SkuRestriction[] = [];
  readonly #usage = new Map<string, Required<VcpuUsage>>();

  constructor(sizes: VmSize[] = defaultVmSizes()) {
    for (const s of sizes) this.offer(s);
  }

  /** Offers a size (replacing one of that name). */
  offer(vmSize: VmSize): void {
    this.#sizes.set(vmSize.name.toLowerCase(), structuredClone(vmSize));
  }

  /** Stops offering a size anywhere. */
  withdraw(name: string): void {
    this.#sizes.delete(name.toLowerCase());
  }

  /** Keeps a size from a subscription (or all) in a location or some of its zones. */
  restrict(restriction: SkuRestriction): void {
    this.#restrictions.push({ ...restriction });
  }

  /** Sets a subscription's usage line in a location; what is not given stays (default: 0 used, the default limit). */
  setUsage(subscriptionId: string, location: string, usage: VcpuUsage): void {
    const key = usageKey(subscriptionId, location, usage.name);
    const current = this.#usage.get(key) ?? this.#defaultUsage(usage.name);
    this.#usage.set(key, {
      name: usage.name,
      current: usage.current ?? current.current,
      limit: usage.limit ?? current.limit,
    });
  }

  #defaultUsage(name: string): Required<VcpuUsage> {
    return {
      name,
      current: 0,
      limit: name.toLowerCase() === "cores" ? DEFAULT_VCPU_LIMIT : DEFAULT_FAMILY_LIMIT,
    };
  }

  /** The resource SKUs of VM sizes a subscription sees, in one location or all. */
  skus(subscriptionId: string, location: string | undefined): JsonObject[] {
    return [...this.#sizes.values()].flatMap((s) => {
      const locations = Object.keys(s.locations).filter((l) => location === undefined || l === location);
      if (locations.length === 0) return [];
      return [this.#sku(s, locations, subscriptionId)];
    });
  }

  #sku(s: VmSize, locations: string[], subscriptionId: string): JsonObject {
    const restrictions = this.#restrictions
      .filter(
        (r) =>
          r.size.toLowerCase() === s.name.toLowerCase() &&
          locations.includes(r.location.toLowerCase()) &&
          (r.subscriptionId === undefined || r.subscriptionId.toLowerCase() === subscriptionId.toLowerCase()),
      )
      .map((r) => ({
        type: r.zones ? "Zone" : "Location",
        values: [r.location],
        restrictionInfo: { locations: [r.location], ...(r.zones ? { zones: r.zones } : {}) },
        reasonCode: r.reasonCode ?? "NotAvailableForSubscription",
      }));
    return {
      resourceType: "virtualMachines",
      name: s.name,
      tier: "Standard",
      size: s.name.replace(/^Standard_/, ""),
      family: s.family,
      locations,
      locationInfo: locations.map((l) => ({ location: l, zones: s.locations[l] ?? [], zoneDetails: [] })),
      capabilities: [
        { name: "vCPUs", value: String(s.vCPUs) },
        { name: "vCPUsAvailable", value: String(s.vCPUs) },
        { name: "MemoryGB", value: String(s.memoryGB) },
        { name: "PremiumIO", value: "True" },
      ],
      restrictions,
    };
  }

  /** A subscription's usage lines in a location: total regional vCPUs, then every family offered there. */
  usages(subscriptionId: string, location: string): JsonObject[] {
    const families = new Set(
      [...this.#sizes.values()].filter((s) => s.locations[location] !== undefined).map((s) => s.family),
    );
    for (const [key, u] of this.#usage)
      if (key.startsWith(usageKey(subscriptionId, location, ""))) families.add(u.name);
    families.delete("cores");
    return ["cores", ...families].map((name) => {
      const u = this.#usage.get(usageKey(subscriptionId, location, name)) ?? this.#defaultUsage(name);
      return {
        unit: "Count",
        currentValue: u.current,
        limit: u.limit,
        name: {
          value: name,
          localizedValue: name === "cores" ? "Total Regional vCPUs" : (FAMILY_NAMES[name] ?? name),
        },
      };
    });
  }
}

/** /subscriptions/{s}/providers/Microsoft.Compute/{skus | locations/{l}/usages} */
export function compute(t: Omit<Target, "resourceGroup">, path: string[]): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  const [first, location, last, ...rest] = path.map((p) => p.toLowerCase());
  if (first === "skus" && location === undefined) return skus(t);
  if (first === "locations" && location !== undefined && last === "usages" && rest.length === 0)
    return ok({ value: t.ctx.compute.usages(t.subscriptionId, location) });
  return cloudError(404, "NotFound", `No route for ${t.req.method} ${t.req.path}.`);
}

/** Resource SKUs, all or (`$filter=location eq '{l}'`) one location's. */
function skus(t: Omit<Target, "resourceGroup">): ArmReply {
  const filter = t.req.query.get("$filter");
  if (!filter) return ok({ value: t.ctx.compute.skus(t.subscriptionId, undefined) });
  const location = /^\s*location\s+eq\s+'([^']+)'\s*$/i.exec(filter)?.[1];
  if (location === undefined)
    return cloudError(
      400,
      "InvalidFilter",
      `The filter '${filter}' is not supported; use location eq '<location>'.`,
    );
  return ok({ value: t.ctx.compute.skus(t.subscriptionId, location.toLowerCase()) });
}
