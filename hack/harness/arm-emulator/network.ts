/**
 * Microsoft.Network public IP addresses and load balancers. A public IP gets its address when its
 * PUT finishes; a load balancer's frontend must reference a public IP that exists
 * (InvalidResourceReference otherwise); a public IP a frontend uses cannot be deleted
 * (PublicIPAddressInUse). Sub-resources of a load balancer get ids and provisioning states.
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
  build(t: Target, { id, body }: BuildInput) {
    const sku = asObject(body["sku"]);
    const props = withoutComputed(asObject(body["properties"]));
    const properties: JsonObject = { ...props };
    for (const collection of CHILD_COLLECTIONS) {
      const children = childResources(t, id, collection, asArray(props[collection]));
      if (!Array.isArray(children)) return children;
      properties[collection] = children;
    }
    const badReference = frontendReferences(t, id, asArray(properties["frontendIPConfigurations"]));
    if (badReference) return badReference;
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
    for (const [field, type] of [
      ["publicIPAddress", PUBLIC_IP_TYPE],
      ["subnet", "Microsoft.Network/virtualNetworks/subnets"],
    ] as const) {
      const ref = asString(asObject(props[field])["id"]);
      if (ref === undefined) continue;
      const target = t.ctx.store.get(ref);
      if (!target || target.type.toLowerCase() !== type.toLowerCase()) {
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

/** Ids of the load balancer frontends that reference the public IP `pipId`. */
export function frontendsUsing(store: ResourceStore, pipId: string): string[] {
  const target = pipId.toLowerCase();
  return store
    .all()
    .filter((r: StoredResource) => r.type === LOAD_BALANCER_TYPE)
    .flatMap((lb) => asArray(lb.properties["frontendIPConfigurations"]))
    .filter(
      (fe) =>
        asString(asObject(asObject(asObject(fe)["properties"])["publicIPAddress"])["id"])?.toLowerCase() ===
        target,
    )
    .map((fe) => asString(asObject(fe)["id"]) ?? "");
}
