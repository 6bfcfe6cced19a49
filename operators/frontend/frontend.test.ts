/** Pure parts of the frontend: schema walks, names, states, operations, translation, versions. */
import { describe, expect, it } from "vitest";
import { SCHEMAS } from "./api-version-schemas.ts";
import { carryHidden, propertiesToHub, toVersioned } from "./hub-conversion.ts";
import { clusterCRName, defaultDnsPrefix, nodePoolCRName } from "./names.ts";
import type { OperationDoc } from "../api/v1alpha1/index.ts";
import { newOperationId, operationKey } from "./operations/document.ts";
import { evaluate } from "./operations/status.ts";
import { formatResourceId, type ResourceId } from "./resource-id.ts";
import {
  applyDefaults,
  checkRequired,
  keepCreateOnly,
  mergePatch,
  readValue,
  type JsonObject,
} from "./body-schema.ts";
import { progressState, resourceState, type Observed } from "./provisioning-state.ts";
import {
  armFieldPath,
  clusterFromCR,
  clusterToCR,
  defaultClusterProperties,
  nodePoolToCR,
} from "./cr-mapping.ts";
import type { FieldError } from "./errors.ts";
import { KubeApiError } from "../runtime/kube.ts";
import { createLogger } from "../runtime/logger.ts";
import { match, PATTERNS, route } from "./routes.ts";
import { cloudErrorFromKube } from "./service-cluster.ts";
import { clusterBody } from "../../test/support/frontend.ts";

const SUB = "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10";
const schema = SCHEMAS["2026-06-30-preview"].cluster;

function cr(
  generation: number,
  observed: number | undefined,
  conds: Array<[string, string, string?]>,
): Observed {
  return {
    metadata: { generation, annotations: {} },
    ...(observed === undefined
      ? {}
      : {
          status: {
            observedGeneration: observed,
            conditions: conds.map(([type, status, reason]) => ({
              type,
              status: status as "True",
              reason: reason ?? "R",
              message: `${type} message`,
              lastTransitionTime: "2026-01-01T00:00:00Z",
            })),
          },
        }),
  };
}

describe("schema", () => {
  it("reads a body: wrong types, enums and ranges are field errors; read-only and unknown fields go", () => {
    const errors: FieldError[] = [];
    const body = clusterBody(SUB) as JsonObject;
    const p = body["properties"] as JsonObject;
    p["provisioningState"] = "Succeeded";
    p["unknown"] = 1;
    p["nodeDrainTimeoutMinutes"] = 99999;
    (p["api"] as JsonObject)["visibility"] = "Sideways";
    const out = readValue(schema, body, "", errors) as JsonObject;
    expect(errors.map((e) => e.target).sort()).toEqual([
      "properties.api.visibility",
      "properties.nodeDrainTimeoutMinutes",
    ]);
    expect((out["properties"] as JsonObject)["provisioningState"]).toBeUndefined();
    expect((out["properties"] as JsonObject)["unknown"]).toBeUndefined();
  });

  it("checks required fields and applies defaults", () => {
    const errors: FieldError[] = [];
    const doc = applyDefaults(schema, { location: "eastus", properties: { platform: {} } }) as JsonObject;
    checkRequired(schema, doc, "", errors);
    expect(errors.map((e) => e.target)).toContain("properties.version");
    expect(errors.map((e) => e.target)).toContain("properties.platform.subnetId");
    expect(doc["properties"]).toMatchObject({
      ingress: { type: "Public" },
      clusterImageRegistry: { state: "Enabled" },
    });
  });

  it("keeps create-only fields on update and refuses changing them", () => {
    const errors: FieldError[] = [];
    const old = {
      location: "eastus",
      properties: { dns: { baseDomainPrefix: "a" }, nodeDrainTimeoutMinutes: 1 },
    };
    const kept = keepCreateOnly(schema, old, { properties: { nodeDrainTimeoutMinutes: 2 } }, errors);
    expect(kept).toEqual({
      location: "eastus",
      properties: { dns: { baseDomainPrefix: "a" }, nodeDrainTimeoutMinutes: 2 },
    });
    keepCreateOnly(
      schema,
      old,
      { location: "westus", properties: { dns: { baseDomainPrefix: "b" } } },
      errors,
    );
    expect(errors.map((e) => e.target)).toEqual(["location", "properties.dns.baseDomainPrefix"]);
  });

  it("merges patches as RFC 7386", () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null, e: 3 }, d: [2] })).toEqual({
      a: { c: 2, e: 3 },
      d: [2],
    });
  });
});

describe("names", () => {
  it("derives DNS-label CR names, stable and distinct per resource group, case-insensitive", () => {
    const long = "A".repeat(54);
    const name = clusterCRName("rg", long);
    expect(name.length).toBeLessThanOrEqual(54);
    expect(name).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
    expect(clusterCRName("RG", "Demo")).toBe(clusterCRName("rg", "demo"));
    expect(clusterCRName("rg1", "demo")).not.toBe(clusterCRName("rg2", "demo"));
    expect(nodePoolCRName("rg", "demo", "Workers-")).toMatch(/^workers-[0-9a-f]{8}$/);
  });

  it("draws a default DNS prefix no name can steer: a DNS label of 15 characters, 10 of them random", () => {
    const drawn = new Set<string>();
    for (const name of ["a-very-long-cluster-name", "A", "ab-", "Demo"])
      for (let i = 0; i < 200; i++) {
        const prefix = defaultDnsPrefix(name);
        expect(prefix.length).toBeLessThanOrEqual(15);
        expect(prefix).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?-[a-z0-9]{10}$/);
        drawn.add(prefix);
      }
    // The same name twice gets two prefixes: nothing about the name decides the suffix.
    expect(drawn.size).toBe(800);
  });
});

describe("states", () => {
  it("follows observedGeneration and the summary conditions", () => {
    expect(progressState("Create", cr(1, undefined, [])).state).toBe("Accepted");
    expect(progressState("Update", cr(2, 1, [["Ready", "True"]])).state).toBe("Accepted");
    expect(
      progressState(
        "Create",
        cr(1, 1, [
          ["Ready", "False"],
          ["Progressing", "True"],
        ]),
      ).state,
    ).toBe("Provisioning");
    expect(
      progressState(
        "Update",
        cr(2, 2, [
          ["Ready", "True"],
          ["Progressing", "True"],
        ]),
      ).state,
    ).toBe("Updating");
    expect(
      progressState(
        "Create",
        cr(1, 1, [
          ["Ready", "True"],
          ["Progressing", "False"],
        ]),
      ).state,
    ).toBe("Succeeded");
    expect(
      progressState(
        "Create",
        cr(1, 1, [
          ["Degraded", "True", "QuotaExceeded"],
          ["Progressing", "False"],
        ]),
      ),
    ).toEqual({
      state: "Failed",
      error: { code: "QuotaExceeded", message: "Degraded message" },
    });
    const deleting = cr(1, 1, [["Ready", "True"]]);
    deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    expect(resourceState(deleting).state).toBe("Deleting");
  });

  it("evaluates operations against the CR they act on", () => {
    const doc: OperationDoc = {
      id: "op-1",
      request: "Delete",
      resourceId: "x",
      kind: "cluster",
      target: "c",
      location: "eastus",
      apiVersion: "2026-06-30-preview",
      startTime: "",
      lastTransitionTime: "",
      status: "Deleting",
    };
    const current = cr(1, 1, []);
    current.metadata.annotations = { "hcp.aro.dev/arm-operation-id": "op-1" };
    expect(evaluate(doc, current).state).toBe("Deleting");
    expect(evaluate(doc, undefined).state).toBe("Succeeded");
    const update = { ...doc, request: "Update" as const, status: "Accepted" as const };
    expect(evaluate(update, undefined).state).toBe("Failed");
    const other = cr(1, 1, []);
    other.metadata.annotations = { "hcp.aro.dev/arm-operation-id": "op-2" };
    expect(evaluate(update, other)).toMatchObject({ state: "Canceled", error: { code: "Canceled" } });
    expect(evaluate({ ...update, status: "Succeeded" }, other).state).toBe("Succeeded");
  });

  it("makes operation IDs that name their CR and look like UUIDs", () => {
    const id = newOperationId("nodePool", "workers-1a2b3c4d");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.slice(0, 8)).toBe(operationKey("nodePool", "workers-1a2b3c4d"));
    expect(id[7]).toBe("1");
    expect(operationKey("cluster", "workers-1a2b3c4d")[7]).toBe("0");
    expect(newOperationId("nodePool", "workers-1a2b3c4d")).not.toBe(id);
  });
});

describe("translation", () => {
  const id: ResourceId = { kind: "cluster", subscriptionId: SUB, resourceGroup: "rg", cluster: "Demo" };

  it("round-trips a cluster through the CR, ARM-only properties in an annotation", () => {
    const body = clusterBody(SUB, { prefix: "demo" }) as JsonObject;
    const doc = applyDefaults(schema, readValue(schema, body, "", [])) as JsonObject;
    const properties = defaultClusterProperties(id, propertiesToHub(doc, "2026-06-30-preview", "cluster"));
    const hub = {
      id: formatResourceId(id),
      name: "Demo",
      type: "t",
      location: "eastus",
      tags: { a: "b" },
      properties,
    };
    const out = clusterToCR(hub, { id, namespace: "ns", name: "demo-x", annotations: {} });
    expect(out.spec.platform.azure).toMatchObject({ subscriptionId: SUB, location: "eastus" });
    expect(out.spec.platform.azure.managedResourceGroup).toMatch(/^arohcp-demo-/);
    expect(out.spec.api).toEqual({ visibility: "Public", authorizedCIDRs: ["10.0.0.0/8"] });
    expect(out.spec.fips).toBe(false);
    expect(out.spec.clusterImageRegistry).toEqual({ state: "Enabled" });
    expect(out.spec.ingress).toEqual({ type: "Public" });
    expect(out.spec.platform.azure.vnetIntegrationSubnetId).toMatch(/\/subnets\/integration$/);
    // Every property the body has reaches the spec: nothing is left for the annotation.
    expect(JSON.parse(out.metadata.annotations!["hcp.aro.dev/arm-properties"]!)).toEqual({});
    const back = clusterFromCR(out);
    expect(back.tags).toEqual({ a: "b" });
    expect(back.properties).toMatchObject({ ...properties, provisioningState: "Accepted" });
  });

  it("maps cryptoRestrictions FIPS to spec.fips and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus", properties: {} };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const fips = clusterToCR({ ...hub, properties: { cryptoRestrictions: "FIPS" } }, ctx);
    expect(fips.spec.fips).toBe(true);
    expect(fips.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(fips).properties.cryptoRestrictions).toBe("FIPS");
    // Stored objects have the CRD's default; a cluster stored with FIPS only in the annotation never got it.
    const stale = clusterToCR({ ...hub, properties: { cryptoRestrictions: "None" } }, ctx);
    stale.metadata.annotations!["hcp.aro.dev/arm-properties"] = '{"cryptoRestrictions":"FIPS"}';
    expect(clusterFromCR(stale).properties.cryptoRestrictions).toBe("None");
  });

  it("maps ingress.type and the VNet integration subnet to the spec and back, never from the annotation", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const subnet = `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/swift`;
    const cr = clusterToCR(
      { ...hub, properties: { ingress: { type: "Private" }, platform: { vnetIntegrationSubnetId: subnet } } },
      ctx,
    );
    expect(cr.spec.ingress).toEqual({ type: "Private" });
    expect(cr.spec.platform.azure.vnetIntegrationSubnetId).toBe(subnet);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties).toMatchObject({
      ingress: { type: "Private" },
      platform: { vnetIntegrationSubnetId: subnet },
    });
    // Kept only in the annotation by an older frontend: not in effect, so not shown (adopt-settings.ts).
    const stale = clusterToCR({ ...hub, properties: { ingress: { type: "Public" } } }, ctx);
    stale.metadata.annotations!["hcp.aro.dev/arm-properties"] = JSON.stringify({
      ingress: { type: "Disabled" },
      platform: { vnetIntegrationSubnetId: subnet },
    });
    const shown = clusterFromCR(stale).properties;
    expect(shown.ingress).toEqual({ type: "Public" });
    expect(shown.platform?.vnetIntegrationSubnetId).toBeUndefined();
  });

  it("maps clusterImageRegistry.state to the spec and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const cr = clusterToCR({ ...hub, properties: { clusterImageRegistry: { state: "Disabled" } } }, ctx);
    expect(cr.spec.clusterImageRegistry).toEqual({ state: "Disabled" });
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.clusterImageRegistry).toEqual({ state: "Disabled" });
  });

  it("maps imageDigestMirrors to the spec and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const imageDigestMirrors = [
      { source: "registry.redhat.io", mirrors: ["a.example.com/rh", "b.example.com/rh"] },
    ];
    const cr = clusterToCR({ ...hub, properties: { imageDigestMirrors } }, ctx);
    expect(cr.spec.imageDigestMirrors).toEqual(imageDigestMirrors);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.imageDigestMirrors).toEqual(imageDigestMirrors);
  });

  it("maps etcd encryption to the spec and back, and GET shows what the spec holds alone", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const etcd = {
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: {
          encryptionType: "KMS",
          kms: { vaultName: "kv-demo", visibility: "Private", activeKey: { name: "etcd", version: "v1" } },
        },
      },
    } as const;
    const cr = clusterToCR({ ...hub, properties: { etcd } }, ctx);
    expect(cr.spec.etcd).toEqual(etcd);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.etcd).toEqual(etcd);
    const platform = { dataEncryption: { keyManagementMode: "PlatformManaged" } };
    expect(clusterToCR({ ...hub, properties: { etcd: platform } }, ctx).spec.etcd).toEqual(platform);
    // A key left in the annotation by an older frontend is not in effect: GET does not show it.
    cr.spec.etcd = undefined;
    cr.metadata.annotations!["hcp.aro.dev/arm-properties"] = JSON.stringify({ etcd });
    expect(clusterFromCR(cr).properties.etcd).toBeUndefined();
  });

  it("maps autoscaling to the spec and back", () => {
    const hub = { id: formatResourceId(id), name: "Demo", type: "t", location: "eastus" };
    const ctx = { id, namespace: "ns", name: "demo-x", annotations: {} };
    const autoscaling = {
      maxNodesTotal: 50,
      maxPodGracePeriodSeconds: 300,
      maxNodeProvisionTimeSeconds: 900,
      podPriorityThreshold: -5,
    };
    const cr = clusterToCR({ ...hub, properties: { autoscaling } }, ctx);
    expect(cr.spec.autoscaling).toEqual(autoscaling);
    expect(cr.metadata.annotations!["hcp.aro.dev/arm-properties"]).toBe("{}");
    expect(clusterFromCR(cr).properties.autoscaling).toEqual(autoscaling);
  });

  it("refuses duplicate node pool label keys and replicas beside autoScaling", () => {
    const np: ResourceId = { ...id, kind: "nodePool", nodePool: "np" };
    const hub = {
      id: formatResourceId(np),
      name: "np",
      type: "t",
      location: "eastus",
      properties: {
        platform: { vmSize: "Standard_D8s_v3" },
        replicas: 2,
        autoScaling: { min: 1, max: 2 },
        labels: [{ key: "a" }, { key: "a" }],
      },
    };
    expect(() => nodePoolToCR(hub, { id: np, namespace: "ns", name: "np-x", annotations: {} })).toThrowError(
      "2 errors",
    );
  });

  it("names ARM fields in the API server's refusals", () => {
    expect(armFieldPath("spec.platform.azure.identities.controlPlaneOperators")).toBe(
      "properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators",
    );
    expect(armFieldPath("spec.network.podCidr must be")).toBe("properties.network.podCidr must be");
    expect(armFieldPath("spec.fips: Invalid value")).toBe("properties.cryptoRestrictions: Invalid value");
    expect(armFieldPath("spec.api.authorizedCIDRs[3]: Invalid value: spec.api.authorizedCIDRs entries")).toBe(
      "properties.api.authorizedCidrs[3]: Invalid value: properties.api.authorizedCidrs entries",
    );
  });

  it("converts 2024-06-10-preview's kms.activeKey.vaultName and keeps what that version cannot see", () => {
    const v2024 = {
      properties: {
        etcd: { dataEncryption: { customerManaged: { kms: { activeKey: { name: "k", vaultName: "v" } } } } },
      },
    };
    const hub = propertiesToHub(v2024, "2024-06-10-preview", "cluster");
    expect(hub).toEqual({
      etcd: { dataEncryption: { customerManaged: { kms: { vaultName: "v", activeKey: { name: "k" } } } } },
    });
    const stored = {
      id: "i",
      name: "n",
      type: "t",
      location: "eastus",
      properties: { ...hub, ingress: { type: "Private" } },
    };
    const seen = propertiesToHub(
      toVersioned(stored, "2024-06-10-preview", "cluster"),
      "2024-06-10-preview",
      "cluster",
    );
    expect(carryHidden(stored.properties, seen, { nodeDrainTimeoutMinutes: 3 })).toEqual({
      nodeDrainTimeoutMinutes: 3,
      ingress: { type: "Private" },
    });
  });
});

describe("hostile input", () => {
  const kubeRefusal = (code: number, causes: Array<{ field?: string; message?: string }>, message = "") =>
    new KubeApiError(code, "Invalid", message, { kind: "Status", message, details: { causes } });

  it("answers the API server's refusals without the CR's shape: unmapped fields are named generically", () => {
    const refusal = cloudErrorFromKube(
      kubeRefusal(422, [
        { field: "<nil>", message: 'Invalid value: "object": no such key: metadata.labels' },
        { field: "metadata.annotations", message: "Too long: must have at most 262144 bytes" },
        { field: "spec.network.podCidr", message: "spec.network.podCidr must be a valid IPv4 CIDR" },
        { field: "spec.dns", message: 'Invalid value: "object": failed rule: self == oldSelf' },
      ]),
    );
    const body = JSON.stringify(refusal?.body);
    expect(refusal?.status).toBe(400);
    expect(body).not.toMatch(/<nil>|metadata|annotation|oldSelf|\bspec\./);
    expect(refusal?.body.details?.map((d) => d.target)).toEqual([
      undefined,
      undefined,
      "properties.network.podCidr",
      "properties.dns",
    ]);
    expect(refusal?.body.details?.map((d) => d.message)).toEqual([
      expect.stringContaining("could not be stored"),
      expect.stringContaining("too large to store"),
      "properties.network.podCidr must be a valid IPv4 CIDR",
      "Field 'properties.dns' cannot be changed after creation",
    ]);
    const whole = cloudErrorFromKube(
      kubeRefusal(422, [], 'HcpCluster.hcp.aro.dev "x" is invalid: metadata.annotations: Too long'),
    );
    expect(whole?.body.message).not.toMatch(/metadata|HcpCluster/);
  });

  it("answers the API server's 413 and etcd's size refusal with a 413", () => {
    for (const err of [
      new KubeApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728", {}),
      new KubeApiError(500, "InternalError", "etcdserver: request is too large", {}),
    ])
      expect(cloudErrorFromKube(err)).toMatchObject({ status: 413, body: { code: "InvalidResource" } });
  });

  it("matches a path whose parameter has malformed percent-encoding, and reports the segment", () => {
    const routes = [route({ pattern: PATTERNS.cluster, methods: {} })];
    const path = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters`;
    expect(match(routes, `${path}/probe%ZZ`)).toMatchObject({ malformed: "probe%ZZ" });
    expect(match(routes, `${path}/a%20b`)).toMatchObject({ params: { cluster: "a b" } });
    expect(match(routes, `${path.replace("hcpOpenShiftClusters", "hcp%ZZ")}/x`)).toBeUndefined();
  });

  it("checks CIDRs, tag names and values, and the location of a body", () => {
    const errors: FieldError[] = [];
    const body = clusterBody(SUB) as JsonObject;
    (body["properties"] as JsonObject)["api"] = {
      authorizedCidrs: ["10.0.0.0/8", "1.2.3.4", "::1/128", "x", "1.2.3.4/40"],
    };
    body["tags"] = { ["k".repeat(600)]: "v", "a?b": "v", ok: "v".repeat(300) };
    body["location"] = " ";
    readValue(schema, body, "", errors);
    expect(errors.map((e) => e.target)).toEqual([
      "location",
      "tags",
      "tags",
      "tags.ok",
      "properties.api.authorizedCidrs[3]",
      "properties.api.authorizedCidrs[4]",
    ]);
    for (const e of errors) expect(e.message.length).toBeLessThan(300);
  });

  it("refuses ARM-only properties too large for the CR's annotations, naming the largest", () => {
    const hub = { ...clusterBody(SUB), id: "/x", name: "c", type: "t" } as unknown as Parameters<
      typeof clusterToCR
    >[0];
    (hub.properties as JsonObject)["imageDigestMirrors"] = [{ source: "s", mirrors: ["m".repeat(200_000)] }];
    const id: ResourceId = { kind: "cluster", subscriptionId: SUB, resourceGroup: "rg", cluster: "c" };
    expect(() => clusterToCR(hub, { id, namespace: "ns", name: "c", annotations: {} })).toThrow(
      expect.objectContaining({ body: expect.objectContaining({ target: "properties.imageDigestMirrors" }) }),
    );
  });
});

describe("logging", () => {
  it("writes JSON lines to the sink it is given (npm run local: a file), children included", () => {
    const lines: string[] = [];
    const log = createLogger({ component: "hcp-frontend" }, "debug", (line) => lines.push(line));
    log
      .child({ correlationRequestId: "corr" })
      .error("ARM request failed", new Error("boom"), { status: 500 });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith("\n")).toBe(true);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      level: "error",
      component: "hcp-frontend",
      correlationRequestId: "corr",
      status: 500,
      err: "boom",
    });
  });
});
