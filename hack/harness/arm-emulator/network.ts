/**
 * Microsoft.Network public IP addresses and load balancers. A public IP gets its address when its
 * PUT finishes; a load balancer's frontend must reference a public IP or a subnet that exists
 * (InvalidResourceReference otherwise); a frontend in a subnet gets a private address from it, as
 * Azure does: the lowest free one (Dynamic, kept across updates) or the one asked for (Static),
 * refused outside the subnet's usable range or when taken; a public IP a frontend uses cannot be
 * deleted (PublicIPAddressInUse). Sub-resources of a load balancer get ids and provisioning states.
 */
import type { Target } from "./context.ts";
import {
  asArray,
  asObject,
  asString,
  cloudError,
  isObject,
  type ArmReply,
  type Json,
  type JsonObject,
} from "./http.ts";
import type { ResourceStore, StoredResource } from "./store.ts";
import type { BuildInput, Kind } from "./tracked.ts";
import { findSubnet, freeAddressIn, ipConfigurationsIn, usableIn } from "./virtualnetworks.ts";

export const PUBLIC_IP_TYPE = "Microsoft.Network/publicIPAddresses";
export const LOAD_BALANCER_TYPE = "Microsoft.Network/loadBalancers";

/** Properties the service computes; a PUT body cannot set them. */
const COMPUTED = ["provisioningState", "resourceGuid", "ipAddress", "ipConfiguration"];

function withoutComputed(props: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(props).filter(([k]) => !COMPUTED.includes(k)));
}

export const publicIpKind: Kind = {
  type: PUBLIC_IP_TYPE,
  build(_t: Target, { body, existing }: BuildInput) {
    const sku = asObject(body["sku"]);
    const skuName = asString(sku["name"]) ?? "Standard";
    const props = asObject(body["properties"]);
    const ipAddress = existing?.properties["ipAddress"];
    return {
      sku: { name: skuName, tier: asString(sku["tier"]) ?? "Regional" },
      properties: {
        ipTags: [],
        idleTimeoutInMinutes: 4,
        ...withoutComputed(props),
        publicIPAllocationMethod:
          asString(props["publicIPAllocationMethod"]) ?? (skuName === "Standard" ? "Static" : "Dynamic"),
        publicIPAddressVersion: asString(props["publicIPAddressVersion"]) ?? "IPv4",
        ...(typeof ipAddress === "string" ? { ipAddress } : {}),
      },
    };
  },
  render(t, r): JsonObject {
    const frontend = frontendsUsing(t.ctx.store, r.id)[0];
    return frontend ? { ipConfiguration: { id: frontend } } : {};
  },
  succeeded(t, r) {
    if (r.properties["ipAddress"] === undefined) r.properties["ipAddress"] = t.ctx.nextIpAddress();
  },
  blocksDelete(t, r) {
    const frontend = frontendsUsing(t.ctx.store, r.id)[0];
    if (!frontend) return undefined;
    return cloudError(
      400,
      "PublicIPAddressInUse",
      `Public IP address ${r.id} can not be deleted since it is still allocated to resource ${frontend}. In order to delete the public IP, disassociate/detach the Public IP address from the resource.`,
    );
  },
};

/** Load balancer collections whose elements are sub-resources with ids. */
const CHILD_COLLECTIONS = [
  "frontendIPConfigurations",
  "backendAddressPools",
  "loadBalancingRules",
  "probes",
  "inboundNatRules",
  "outboundRules",
];

export const loadBalancerKind: Kind = {
  type: LOAD_BALANCER_TYPE,
  build(t: Target, { id, body, existing }: BuildInput) {
    const sku = asObject(body["sku"]);
    const props = withoutComputed(asObject(body["properties"]));
    const properties: JsonObject = { ...props };
    for (const collection of CHILD_COLLECTIONS) {
      const children = childResources(t, id, collection, asArray(props[collection]));
      if (!Array.isArray(children)) return children;
      properties[collection] = children;
    }
    const frontends = asArray(properties["frontendIPConfigurations"]);
    const badReference = frontendReferences(t, id, frontends);
    if (badReference) return badReference;
    const badAddress = privateAddresses(t, id, frontends, existing);
    if (badAddress) return badAddress;
    return {
      sku: { name: asString(sku["name"]) ?? "Standard", tier: asString(sku["tier"]) ?? "Regional" },
      properties,
    };
  },
};

function childResources(t: Target, parentId: string, collection: string, items: Json[]): Json[] | ArmReply {
  const out: Json[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const name = isObject(item) ? asString(item["name"]) : undefined;
    if (!name || seen.has(name.toLowerCase())) {
      return cloudError(
        400,
        "InvalidRequestFormat",
        `Cannot parse the request: every element of ${collection} needs a unique name.`,
      );
    }
    seen.add(name.toLowerCase());
    const props = asObject(asObject(item)["properties"]);
    out.push({
      name,
      id: `${parentId}/${collection}/${name}`,
      etag: t.ctx.store.newEtag(),
      type: `${LOAD_BALANCER_TYPE}/${collection}`,
      properties: { ...props, provisioningState: "Succeeded" },
    });
  }
  return out;
}

/** Every frontend's public IP (and subnet) must exist. */
function frontendReferences(t: Target, lbId: string, frontends: Json[]): ArmReply | undefined {
  for (const frontend of frontends) {
    const props = asObject(asObject(frontend)["properties"]);
    for (const field of ["publicIPAddress", "subnet"] as const) {
      const ref = asString(asObject(props[field])["id"]);
      if (ref === undefined) continue;
      const target = t.ctx.store.get(ref);
      const exists =
        field === "subnet"
          ? findSubnet(t.ctx.store, ref) !== undefined
          : target?.type.toLowerCase() === PUBLIC_IP_TYPE.toLowerCase();
      if (!exists) {
        return cloudError(
          400,
          "InvalidResourceReference",
          `Resource ${ref} referenced by resource ${lbId} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region.`,
        );
      }
    }
  }
  return undefined;
}

/** The private address a frontend had in `subnetId` before this PUT, if any: Dynamic ones keep it. */
function previousAddress(
  existing: StoredResource | undefined,
  name: string,
  subnetId: string,
): string | undefined {
  const before = asArray(existing?.properties["frontendIPConfigurations"])
    .map(asObject)
    .find((fe) => asString(fe["name"])?.toLowerCase() === name.toLowerCase());
  const props = asObject(before?.["properties"]);
  const sameSubnet = asString(asObject(props["subnet"])["id"])?.toLowerCase() === subnetId.toLowerCase();
  return sameSubnet ? asString(props["privateIPAddress"]) : undefined;
}

/**
 * Gives each frontend in a subnet its private address: the one asked for (Static) if usable and
 * free, else the one it had, else the subnet's lowest free one. Addresses of this load balancer's
 * earlier frontends count as free: the PUT replaces them.
 */
function privateAddresses(
  t: Target,
  lbId: string,
  frontends: Json[],
  existing: StoredResource | undefined,
): ArmReply | undefined {
  const own = `${lbId.toLowerCase()}/`;
  const givenHere = new Map<string, Set<string>>();
  for (const fe of frontends.map(asObject)) {
    const props = asObject(fe["properties"]);
    const subnetId = asString(asObject(props["subnet"])["id"]);
    const subnet = subnetId ? findSubnet(t.ctx.store, subnetId) : undefined;
    if (!subnetId || !subnet) continue;
    const taken = givenHere.get(subnetId.toLowerCase()) ?? new Set<string>();
    givenHere.set(subnetId.toLowerCase(), taken);
    for (const other of ipConfigurationsIn(t.ctx.store, subnetId))
      if (!other.id.toLowerCase().startsWith(own) && other.privateIPAddress)
        taken.add(other.privateIPAddress);
    const name = asString(fe["name"]) ?? "";
    const address = addressFor(props, subnet, taken, previousAddress(existing, name, subnetId));
    if (typeof address !== "string") return address;
    taken.add(address);
    props["privateIPAddress"] = address;
    props["privateIPAllocationMethod"] = asString(props["privateIPAllocationMethod"]) ?? "Dynamic";
    props["privateIPAddressVersion"] = "IPv4";
  }
  return undefined;
}

function addressFor(
  props: JsonObject,
  subnet: JsonObject,
  taken: ReadonlySet<string>,
  before: string | undefined,
): string | ArmReply {
  const subnetName = asString(subnet["name"]) ?? "";
  if (asString(props["privateIPAllocationMethod"]) === "Static") {
    const asked = asString(props["privateIPAddress"]) ?? "";
    if (!usableIn(subnet, asked))
      return cloudError(
        400,
        "PrivateIPAddressNotInSubnet",
        `Private static IP address ${asked} does not belong to the range of subnet prefix ${asString(asObject(subnet["properties"])["addressPrefix"]) ?? ""} of subnet ${subnetName}, or is one Azure reserves.`,
      );
    if (taken.has(asked))
      return cloudError(
        400,
        "PrivateIPAddressInUse",
        `IP configuration is using the private IP address ${asked} which is already allocated to another resource.`,
      );
    return asked;
  }
  if (before && !taken.has(before)) return before;
  return (
    freeAddressIn(subnet, taken) ??
    cloudError(
      400,
      "SubnetIsFull",
      `Subnet ${subnetName} with address prefix ${asString(asObject(subnet["properties"])["addressPrefix"]) ?? ""} does not have enough capacity for 1 IP addresses.`,
    )
  );
}

/** Ids of the load balancer frontends that reference the public IP `pipId`. */
export function frontendsUsing(store: ResourceStore, pipId: string): string[] {
  const target = pipId.toLowerCase();
  return store
    .frontendsNaming(pipId)
    .filter(({ owner }) => owner.type === LOAD_BALANCER_TYPE)
    .map(({ frontend }) => frontend)
    .filter(
      (fe) =>
        asString(asObject(asObject(fe["properties"])["publicIPAddress"])["id"])?.toLowerCase() === target,
    )
    .map((fe) => asString(fe["id"]) ?? "");
}
