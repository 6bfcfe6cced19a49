import { describe, expect, it } from "vitest";
import { operationUrlKind } from "./router.ts";
import { parseTags, preconditionFailed, ResourceStore, type StoredResource } from "./store.ts";
import type { JsonObject } from "./http.ts";

function resource(id: string, type = "Microsoft.Network/publicIPAddresses"): StoredResource {
  return {
    id,
    name: id.split("/").at(-1) ?? "",
    type,
    subscriptionId: "s",
    resourceGroup: "rg",
    tags: {},
    etag: 'W/"1"',
    properties: {},
  };
}

describe("ResourceStore", () => {
  it("finds ids case-insensitively and keeps the original casing", () => {
    const store = new ResourceStore();
    store.put(
      resource("/subscriptions/s/resourceGroups/RG/providers/Microsoft.Network/publicIPAddresses/Pip"),
    );
    const found = store.get(
      "/SUBSCRIPTIONS/s/resourcegroups/rg/providers/microsoft.network/publicipaddresses/pip",
    );
    expect(found?.id).toBe(
      "/subscriptions/s/resourceGroups/RG/providers/Microsoft.Network/publicIPAddresses/Pip",
    );
  });

  it("lists what is under a parent, not the parent nor a sibling sharing its prefix", () => {
    const store = new ResourceStore();
    const zone = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/dnszones/example.com";
    store.put(resource(zone, "Microsoft.Network/dnszones"));
    store.put(resource(`${zone}/A/api`, "Microsoft.Network/dnszones/A"));
    store.put(resource(`${zone}.org`, "Microsoft.Network/dnszones"));
    expect(store.under(zone).map((r) => r.id)).toEqual([`${zone}/A/api`]);
  });

  it("forgets a deleted resource in every index and lists a re-created one last", () => {
    const store = new ResourceStore();
    const group = "/subscriptions/s/resourceGroups/rg";
    const ip = (name: string) => `${group}/providers/Microsoft.Network/publicIPAddresses/${name}`;
    for (const name of ["a", "b", "c"]) store.put(resource(ip(name)));
    store.delete(ip("A"));
    expect(store.under(group).map((r) => r.name)).toEqual(["b", "c"]);
    store.put(resource(ip("a")));
    store.put(resource(ip("b")));
    expect(store.under(group).map((r) => r.name)).toEqual(["b", "c", "a"]);
    expect(store.everyOfType("microsoft.network/PUBLICIPADDRESSES").map((r) => r.name)).toEqual([
      "b",
      "c",
      "a",
    ]);
    for (const name of ["a", "b", "c"]) store.delete(ip(name));
    expect(store.under("/subscriptions/s")).toEqual([]);
    expect(store.everyOfType("Microsoft.Network/publicIPAddresses")).toEqual([]);
  });

  it("finds the frontends naming a public IP or subnet as the load balancer was last stored", () => {
    const store = new ResourceStore();
    const lbType = "Microsoft.Network/loadBalancers";
    const lbId = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb";
    const frontend = (name: string, pip: string): JsonObject => ({
      id: `${lbId}/frontendIPConfigurations/${name}`,
      properties: { publicIPAddress: { id: pip }, subnet: { id: "/Subnet/S" } },
    });
    const lb = (...frontends: JsonObject[]): StoredResource => ({
      ...resource(lbId, lbType),
      properties: { frontendIPConfigurations: frontends },
    });
    const names = (id: string) =>
      store.frontendsNaming(id).map(({ owner, frontend }) => `${owner.name}:${frontend["id"] as string}`);
    store.put(lb(frontend("one", "/pip/1"), frontend("two", "/pip/2")));
    expect(names("/PIP/1")).toEqual([`lb:${lbId}/frontendIPConfigurations/one`]);
    expect(names("/subnet/s")).toHaveLength(2);
    store.put(lb(frontend("two", "/pip/2")));
    expect(names("/pip/1")).toEqual([]);
    expect(names("/subnet/s")).toEqual([`lb:${lbId}/frontendIPConfigurations/two`]);
    store.delete(lbId);
    expect(names("/pip/2")).toEqual([]);
    expect(names("/subnet/s")).toEqual([]);
  });
});

describe("parseTags", () => {
  it.each([
    ["no tags", undefined, {}],
    ["plain tags", { a: "b", "hcp.aro.dev_owner": "x" }, { a: "b", "hcp.aro.dev_owner": "x" }],
  ])("accepts %s", (_what, input, tags) => {
    expect(parseTags(input)).toEqual({ tags });
  });

  it.each([
    ["a slash", { "hcp.aro.dev/owner": "x" }, "InvalidTagNameCharacters"],
    ["a question mark", { "a?": "x" }, "InvalidTagNameCharacters"],
    ["a non-string value", { a: 1 }, "InvalidRequestContent"],
  ])("refuses a tag name with %s", (_what, input, code) => {
    const parsed = parseTags(input);
    expect("error" in parsed && parsed.error).toMatchObject({ status: 400, body: { error: { code } } });
  });
});

describe("preconditionFailed", () => {
  const existing = resource("/x");
  type Case = { r: StoredResource | undefined; ifMatch?: string; ifNoneMatch?: string; fails: boolean };
  it.each<[string, Case]>([
    ["If-None-Match * on a missing resource", { r: undefined, ifNoneMatch: "*", fails: false }],
    ["If-None-Match * on an existing resource", { r: existing, ifNoneMatch: "*", fails: true }],
    ["If-Match with the current etag", { r: existing, ifMatch: existing.etag, fails: false }],
    ["If-Match with an old etag", { r: existing, ifMatch: 'W/"0"', fails: true }],
    ["If-Match * on a missing resource", { r: undefined, ifMatch: "*", fails: true }],
  ])("%s", (_what, c) => {
    expect(preconditionFailed(c.r, c.ifMatch, c.ifNoneMatch) !== undefined).toBe(c.fails);
  });
});

describe("operationUrlKind", () => {
  it.each([
    ["/subscriptions/s/providers/Microsoft.Network/locations/eastus/operations/id", "status"],
    ["/subscriptions/s/providers/Microsoft.Network/locations/eastus/operationResults/id", "result"],
    ["/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/dnsOperationStatuses/id", "status"],
    ["/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/dnsOperationResults/id", "result"],
    ["/subscriptions/s/operationresults/id", "result"],
    ["/subscriptions/s/resourceGroups/operations/resources", undefined],
    ["/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/dnszones/operations", undefined],
  ])("%s", (path, kind) => {
    expect(
      operationUrlKind(
        path
          .split("/")
          .filter(Boolean)
          .map((s) => s.toLowerCase()),
      ),
    ).toBe(kind);
  });
});
