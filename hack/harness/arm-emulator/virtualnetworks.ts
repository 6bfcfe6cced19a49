/**
 * Microsoft.Network virtual networks and their subnets, as a customer makes them before creating a
 * cluster: an IPv4 address space and subnets (each a prefix inside it, none overlapping, with its
 * delegations and network security group as sent), a subnet read on its own, and the refusals
 * Azure gives: a subnet outside the space or overlapping another, and a subnet a load balancer
 * frontend uses being removed or its network deleted (InUseSubnetCannotBeDeleted). Private
 * addresses are handed out here: a subnet's lowest free address past the four Azure reserves.
 */
import { isReply, requireGroup, resourceNotFound, type Target } from "./context.ts";
import {
  asArray,
  asObject,
  asString,
  cloudError,
  isObject,
  ok,
  type ArmReply,
  type Json,
  type JsonObject,
} from "./http.ts";
import { methodNotAllowed } from "./resourcegroups.ts";
import type { ResourceStore, StoredResource } from "./store.ts";
import { render, tracked, type Kind } from "./tracked.ts";

export const VIRTUAL_NETWORK_TYPE = "Microsoft.Network/virtualNetworks";
export const SUBNET_TYPE = "Microsoft.Network/virtualNetworks/subnets";

/** An IPv4 network: its first address as a number and its prefix length. */
interface Cidr {
  base: number;
  bits: number;
}

function parseIpv4(s: string): number | undefined {
  const parts = s.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

function ipv4String(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
}

/** A network address with its prefix length ("10.0.0.0/24"); undefined for host bits set or garbage. */
function parseCidr(s: string | undefined): Cidr | undefined {
  const [ip = "", bitsText = ""] = (s ?? "").split("/");
  const base = parseIpv4(ip);
  const bits = /^\d{1,2}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (base === undefined || !(bits >= 0 && bits <= 32)) return undefined;
  return base % 2 ** (32 - bits) === 0 ? { base, bits } : undefined;
}

const size = (c: Cidr): number => 2 ** (32 - c.bits);
const inside = (outer: Cidr, inner: Cidr): boolean =>
  inner.bits >= outer.bits &&
  inner.base >= outer.base &&
  inner.base + size(inner) <= outer.base + size(outer);
const overlap = (a: Cidr, b: Cidr): boolean => a.base < b.base + size(b) && b.base < a.base + size(a);

/** The virtual network of a subnet ID, and the subnet's name. */
function splitSubnetId(subnetId: string): { vnetId: string; name: string } | undefined {
  const m = /^(.*\/virtualNetworks\/[^/]+)\/subnets\/([^/]+)$/i.exec(subnetId);
  return m?.[1] && m[2] ? { vnetId: m[1], name: m[2] } : undefined;
}

/** A subnet as stored in its virtual network, by its ID in any casing. */
export function findSubnet(store: ResourceStore, subnetId: string): JsonObject | undefined {
  const parts = splitSubnetId(subnetId);
  const vnet = parts && store.get(parts.vnetId);
  if (!parts || vnet?.type !== VIRTUAL_NETWORK_TYPE) return undefined;
  return asArray(vnet.properties["subnets"])
    .filter(isObject)
    .find((s) => asString(s["name"])?.toLowerCase() === parts.name.toLowerCase());
}

/** The load balancer frontends in a subnet: their IDs and private addresses. */
export function ipConfigurationsIn(
  store: ResourceStore,
  subnetId: string,
): Array<{ id: string; privateIPAddress?: string }> {
  const target = subnetId.toLowerCase();
  return store
    .frontendsNaming(subnetId)
    .map(({ frontend }) => frontend)
    .filter((fe) => asString(asObject(asObject(fe["properties"])["subnet"])["id"])?.toLowerCase() === target)
    .map((fe) => {
      const address = asString(asObject(fe["properties"])["privateIPAddress"]);
      return { id: asString(fe["id"]) ?? "", ...(address ? { privateIPAddress: address } : {}) };
    });
}

/**
 * Whether `address` may be given out in the subnet: inside its prefix, not one of the first four
 * (network, gateway, two DNS) nor the last (broadcast), which Azure reserves.
 */
export function usableIn(subnet: JsonObject, address: string): boolean {
  const prefix = parseCidr(asString(asObject(subnet["properties"])["addressPrefix"]));
  const n = parseIpv4(address);
  return !!prefix && n !== undefined && n >= prefix.base + 4 && n < prefix.base + size(prefix) - 1;
}

/** The subnet's lowest usable address not in `taken`. */
export function freeAddressIn(subnet: JsonObject, taken: ReadonlySet<string>): string | undefined {
  const prefix = parseCidr(asString(asObject(subnet["properties"])["addressPrefix"]));
  if (!prefix) return undefined;
  for (let n = prefix.base + 4; n < prefix.base + size(prefix) - 1; n++) {
    const address = ipv4String(n);
    if (!taken.has(address)) return address;
  }
  return undefined;
}

function invalidPrefix(what: string, prefix: string | undefined): ArmReply {
  return cloudError(
    400,
    "InvalidAddressPrefixFormat",
    `Address prefix ${prefix ?? "(none)"} of ${what} does not have a valid format: an IPv4 network address and prefix length such as 10.0.0.0/16.`,
  );
}

/** The network's address space, each prefix checked. */
function addressSpace(props: JsonObject, name: string): Cidr[] | ArmReply {
  const prefixes = asArray(asObject(props["addressSpace"])["addressPrefixes"]);
  const out: Cidr[] = [];
  for (const p of prefixes) {
    const cidr = parseCidr(asString(p));
    if (!cidr) return invalidPrefix(`virtual network ${name}`, asString(p));
    out.push(cidr);
  }
  return out;
}

/** The subnets as stored: IDs, types, provisioning states; their prefixes inside the space, apart. */
function subnetsOf(vnetId: string, props: JsonObject, space: Cidr[]): Json[] | ArmReply {
  const out: Json[] = [];
  const placed: Array<{ name: string; cidr: Cidr }> = [];
  for (const item of asArray(props["subnets"])) {
    const name = asString(asObject(item)["name"]);
    if (!name)
      return cloudError(400, "InvalidRequestFormat", "Cannot parse the request: every subnet needs a name.");
    const subnetProps = asObject(asObject(item)["properties"]);
    const prefix = asString(subnetProps["addressPrefix"]);
    const cidr = parseCidr(prefix);
    if (!cidr) return invalidPrefix(`subnet ${name}`, prefix);
    if (!space.some((s) => inside(s, cidr)))
      return cloudError(
        400,
        "NetcfgSubnetRangeOutsideVnet",
        `Subnet '${name}' is not valid because its IP address range is outside the IP address range of virtual network '${vnetId.split("/").pop() ?? ""}'.`,
      );
    const clash = placed.find((p) => overlap(p.cidr, cidr));
    if (clash)
      return cloudError(
        400,
        "NetcfgSubnetRangesOverlap",
        `Subnet '${name}' is not valid because its IP address range overlaps with that of an existing subnet '${clash.name}' in virtual network.`,
      );
    placed.push({ name, cidr });
    const id = `${vnetId}/subnets/${name}`;
    const delegations = asArray(subnetProps["delegations"]).map((d, i) => {
      const dName = asString(asObject(d)["name"]) ?? `delegation-${i}`;
      const dProps = asObject(asObject(d)["properties"]);
      return {
        name: dName,
        id: `${id}/delegations/${dName}`,
        type: `${SUBNET_TYPE}/delegations`,
        properties: { ...dProps, provisioningState: "Succeeded" },
      };
    });
    out.push({
      name,
      id,
      type: SUBNET_TYPE,
      properties: { ...subnetProps, delegations, provisioningState: "Succeeded" },
    });
  }
  return out;
}

function subnetInUse(t: Target, subnetId: string): ArmReply | undefined {
  const user = ipConfigurationsIn(t.ctx.store, subnetId)[0];
  if (!user) return undefined;
  const name = subnetId.split("/").pop() ?? "";
  return cloudError(
    400,
    "InUseSubnetCannotBeDeleted",
    `Subnet ${name} is in use by ${user.id} and cannot be deleted. In order to delete the subnet, delete all the resources within the subnet.`,
  );
}

export const virtualNetworkKind: Kind = {
  type: VIRTUAL_NETWORK_TYPE,
  build(t: Target, { id, body, existing }) {
    const props = asObject(body["properties"]);
    const space = addressSpace(props, id.split("/").pop() ?? "");
    if (!Array.isArray(space)) return space;
    const subnets = subnetsOf(id, props, space);
    if (!Array.isArray(subnets)) return subnets;
    const kept = new Set(subnets.map((s) => (asString(asObject(s)["name"]) ?? "").toLowerCase()));
    for (const old of asArray(existing?.properties["subnets"])) {
      const oldName = asString(asObject(old)["name"]) ?? "";
      const inUse = kept.has(oldName.toLowerCase()) ? undefined : subnetInUse(t, `${id}/subnets/${oldName}`);
      if (inUse) return inUse;
    }
    return { properties: { ...props, subnets } };
  },
  render(t, r): JsonObject {
    // Each subnet shows the frontends in it, as Azure's ipConfigurations do.
    const subnets = asArray(r.properties["subnets"]).map((s) => {
      const subnet = asObject(s);
      const users = ipConfigurationsIn(t.ctx.store, asString(subnet["id"]) ?? "");
      if (users.length === 0) return subnet;
      const props = asObject(subnet["properties"]);
      return { ...subnet, properties: { ...props, ipConfigurations: users.map((u) => ({ id: u.id })) } };
    });
    return { subnets };
  },
  blocksDelete(t, r) {
    for (const s of asArray(r.properties["subnets"])) {
      const inUse = subnetInUse(t, asString(asObject(s)["id"]) ?? "");
      if (inUse) return inUse;
    }
    return undefined;
  },
};

/** GET of one subnet, or of a network's subnets; subnets are written through their network here. */
function subnetRequest(
  t: Target,
  vnet: StoredResource | undefined,
  vnetName: string,
  name?: string,
): ArmReply {
  if (t.req.method !== "GET") return methodNotAllowed(t.req.method);
  if (!vnet) return resourceNotFound(VIRTUAL_NETWORK_TYPE, vnetName, t.resourceGroup);
  const rendered = asObject(render(t, virtualNetworkKind, vnet)["properties"]);
  const subnets = asArray(rendered["subnets"]).filter(isObject);
  if (name === undefined) return ok({ value: subnets });
  const subnet = subnets.find((s) => asString(s["name"])?.toLowerCase() === name.toLowerCase());
  return subnet ? ok(subnet) : resourceNotFound(SUBNET_TYPE, `${vnetName}/${name}`, t.resourceGroup);
}

/** Routes .../virtualNetworks[/{name}[/subnets[/{subnet}]]]. */
export function virtualNetworks(t: Target, name: string | undefined, rest: string[]): ArmReply {
  if (rest.length === 0) return tracked(t, virtualNetworkKind, name);
  if (name === undefined || rest[0]?.toLowerCase() !== "subnets" || rest.length > 2)
    return cloudError(404, "NotFound", `No route for ${t.req.method} ${t.req.path}.`);
  const group = requireGroup(t, false);
  if (isReply(group)) return group;
  const vnet = t.ctx.store.get(`${group.id}/providers/${VIRTUAL_NETWORK_TYPE}/${name}`);
  return subnetRequest(t, vnet, name, rest[1]);
}
