/**
 * The Azure orphan sweep with the real Azure SDK clients over https to the ARM emulator and the
 * service cluster's real kube-apiserver: resources whose owner tag names no HcpCluster are marked,
 * kept through the grace period and deleted after it (a load balancer before the public IP it
 * uses), each reported by an event on the report ConfigMap and by metrics; a live cluster's
 * resources are never marked; resources without our owner tag (and the region's own, owned by
 * "hcp-service") are never written; an owner that exists again clears the mark; a sweep whose
 * HcpCluster cache never synced (every list refused) decides nothing and writes nothing. Time
 * moves by an injected clock; a new sweep instance stands for a restart, with the grace read
 * back from the resources.
 */
import { load } from "js-yaml";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArmEmulator, type ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { ConfigMapResource } from "../../operators/api/core.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import {
  createAzureClients,
  ensureDnsZone,
  ensureLoadBalancer,
  ensureNsDelegation,
  ensurePublicIp,
  ensureResourceGroup,
  type AzureClients,
  type Outcome,
  type Owner,
} from "../../operators/azure/index.ts";
import { OrphanSweep, type SweepResult } from "../../operators/orphansweep/controller.ts";
import { ORPHANED_SINCE_TAG } from "../../operators/orphansweep/inventory.ts";
import { REPORT_NAME } from "../../operators/orphansweep/report.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";

const HOUR = 3_600_000;
const location = "eastus";
const client = clientFor("service");
const sample = load(
  await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8"),
) as HcpCluster;
/** The sample's subscription (its subnet is in it): the clusters', where their groups are. */
const sub = sample.spec.platform.azure.subscriptionId;
const parentSub = randomUUID();
const parentZone = { subscriptionId: parentSub, resourceGroup: "hcp-region", name: "hcp.example.com" };
const writes = { method: ["PUT", "PATCH", "DELETE"] };

let emu: ArmEmulator;
let azure: AzureClients;
let workDir: string;
let ns: { name: string; remove(): Promise<void> };
const clusters = new ClusterRegistry();
let clock = new Date("2026-11-28T12:00:00Z");
const T0 = clock;
/** The cluster that exists, and one whose resources were marked while the cache had not seen it. */
let live: Owner;
let back: Owner;
/** Clusters that never existed here: their resources are orphans. */
const gone: Owner = { id: randomUUID(), cluster: "" };
const goneToo: Owner = { id: randomUUID(), cluster: "" };
/** Another region's cluster in the same subscription: in no cache here, and not this region's. */
const elsewhere: Owner = { id: randomUUID(), cluster: "elsewhere/c" };

async function makeCluster(name: string): Promise<Owner> {
  const c = load(
    await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8"),
  ) as HcpCluster;
  c.metadata = { name, namespace: ns.name };
  c.spec.dns.baseDomainPrefix = `os${name}${process.pid % 10000}`;
  const created = await client.create(HcpClusterResource, c);
  return { id: created.metadata.uid ?? "", cluster: `${ns.name}/${name}` };
}

async function done<T>(call: () => Promise<Outcome<T>>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const outcome = await call();
    if (outcome.done) return outcome.value;
  }
  throw new Error("still in progress after 100 calls");
}

/** The sweep as main.ts builds it, given the test's clock and a registry of its own. */
function newSweep(registry = new Registry(), cluster = clusters.get("service")): OrphanSweep {
  return new OrphanSweep({
    cluster,
    azure,
    parentZone,
    namespace: ns.name,
    graceMs: HOUR,
    now: () => clock,
    registry,
  });
}

async function decided(sweep: OrphanSweep): Promise<Extract<SweepResult, { decided: true }>> {
  const result = await sweep.sweep();
  if (!result.decided) throw new Error(`the sweep decided nothing: ${result.reason}`);
  return result;
}

const found = (name: string, type?: string) =>
  emu.resources().find((r) => r.name === name && (type === undefined || r.type.endsWith(type)));
const tagsOf = (name: string, type?: string): Record<string, string> | undefined => {
  const r = found(name, type);
  if (!r) return undefined;
  const metadata = r.properties["metadata"];
  return r.type.includes("dnszones/") ? (metadata as Record<string, string>) : r.tags;
};

async function reasons(): Promise<string[]> {
  const events = await client.list<KubeObject & { reason?: string; count?: number }>(eventType, {
    namespace: ns.name,
    fieldSelector: `involvedObject.name=${REPORT_NAME}`,
  });
  return events.items.flatMap((e) => Array<string>(e.count ?? 1).fill(e.reason ?? "")).sort();
}

async function report(): Promise<Record<string, string>> {
  const cm = await client.get<KubeObject & { data?: Record<string, string> }>(
    ConfigMapResource,
    REPORT_NAME,
    ns.name,
  );
  return cm.data ?? {};
}

async function metric(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return values
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "orphansweep-test-"));
  emu = await startArmEmulator({ workDir, asyncDelayMs: 20 });
  azure = await createAzureClients({
    armEndpoint: emu.endpoint,
    authorityHost: emu.endpoint,
    caFile: emu.caPath,
    credential: { tenantId: emu.tenantId, clientId: emu.clientId, clientSecret: emu.clientSecret },
    operationWaitMs: 3_000,
    pollIntervalMs: 10,
    inProgressRequeueMs: 20,
    registry: new Registry(),
  });
  ns = await tempNamespace(client, "os");
  live = await makeCluster("live");
  back = await makeCluster("back");
  gone.cluster = `${ns.name}/gone`;
  goneToo.cluster = `${ns.name}/gone-too`;
  clusters.add("service", { path: clusterInfo("service").kubeconfigPath });

  // The region's own parent zone and group, owned by the service (not a cluster).
  const service: Owner = { id: "hcp-service", cluster: "region" };
  await ensureResourceGroup(azure, {
    subscriptionId: parentSub,
    name: "hcp-region",
    location,
    owner: service,
  });
  await ensureDnsZone(azure, {
    subscriptionId: parentSub,
    resourceGroup: "hcp-region",
    zoneName: parentZone.name,
    owner: service,
  });
  const delegation = (owner: Owner, childLabel: string) =>
    ensureNsDelegation(azure, {
      subscriptionId: parentSub,
      resourceGroup: "hcp-region",
      parentZone: parentZone.name,
      childLabel,
      nameServers: ["ns1.example.net"],
      owner,
    });
  // Each cluster's managed group and delegation.
  for (const [owner, name] of [
    [live, "live"],
    [back, "back"],
    [gone, "gone"],
  ] as const) {
    await ensureResourceGroup(azure, { subscriptionId: sub, name: `${name}-rg`, location, owner });
    await delegation(owner, name);
  }
  // A gone cluster with no delegation left, its zone (under the parent zone) in its group; another
  // region's cluster with its group and zone (under that region's parent zone).
  for (const [owner, name, zoneName] of [
    [goneToo, "gone-too-rg", `gonetoo.${parentZone.name}`],
    [elsewhere, "elsewhere-rg", "c.westus3.example.org"],
  ] as const) {
    await ensureResourceGroup(azure, { subscriptionId: sub, name, location, owner });
    await ensureDnsZone(azure, { subscriptionId: sub, resourceGroup: name, zoneName, owner });
  }
  // The gone cluster's ingress in a group the user named (not ours): each resource tagged on its own.
  const network = azure.network(sub);
  await azure.resources(sub).resourceGroups.createOrUpdate("byo-rg", { location });
  const inByo = { subscriptionId: sub, resourceGroup: "byo-rg", owner: gone, location };
  const ip = await done(() => ensurePublicIp(azure, { ...inByo, name: "gone-ip" }));
  await done(() => ensureLoadBalancer(azure, { ...inByo, name: "gone-lb", publicIpId: ip.id }));
  // Someone else's: an untagged IP beside them, and an untagged group.
  await network.publicIPAddresses.beginCreateOrUpdateAndWait(
    "byo-rg",
    "theirs-ip",
    { location, sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
    { updateIntervalInMs: 10 },
  );
  await azure.resources(sub).resourceGroups.createOrUpdate("their-rg", { location, tags: { team: "a" } });
  // The back cluster's group as a sweep left it when its cache had not seen the cluster yet.
  await azure.resources(sub).resourceGroups.update("back-rg", {
    tags: { ...tagsOf("back-rg"), [ORPHANED_SINCE_TAG]: T0.toISOString() },
  });
  emu.clearRequests();
}, 60_000);

afterAll(async () => {
  clusters.stopAll();
  await ns?.remove();
  await emu?.stop();
  await rm(workDir, { recursive: true, force: true });
});

describe("the Azure orphan sweep", () => {
  it("decides nothing while its HcpCluster cache has not synced (every list refused)", async () => {
    const refused = new ClusterRegistry().add("refused", {
      server: clusterInfo("service").url,
      authenticate: () => Promise.reject(new Error("no credentials in this test")),
    });
    try {
      const result = await newSweep(new Registry(), refused).sweep();
      expect(result).toEqual({ decided: false, reason: "the HcpCluster cache has not synced" });
      expect(emu.requests()).toEqual([]);
    } finally {
      refused.stop();
    }
  });

  const registry = new Registry();
  const first = (): OrphanSweep => firstSweep ?? (firstSweep = newSweep(registry));
  let firstSweep: OrphanSweep | undefined;
  const orphans = ["gone-rg", "gone-ip", "gone-lb", "gone-too-rg"];

  it("marks the orphans, deletes nothing, clears the mark of an owner that exists, and reports each", async () => {
    const sweep = first();
    await eventually("the HcpCluster cache to sync", () => clusters.get("service").hasSynced());
    const result = await decided(sweep);
    expect(result).toMatchObject({ marked: 5, unmarked: 1, deleted: 0 });
    for (const name of orphans) expect(tagsOf(name)?.[ORPHANED_SINCE_TAG]).toBe(T0.toISOString());
    expect(tagsOf("gone", "/NS")?.[ORPHANED_SINCE_TAG]).toBe(T0.toISOString());
    // Live clusters' resources: never marked; the back cluster's mark is gone.
    for (const [name, type] of [["live-rg"], ["back-rg"], ["live", "/NS"], ["back", "/NS"]] as const)
      expect(tagsOf(name, type)).not.toHaveProperty(ORPHANED_SINCE_TAG);
    expect(tagsOf("elsewhere-rg")).not.toHaveProperty(ORPHANED_SINCE_TAG);
    expect(await reasons()).toEqual([...Array<string>(5).fill("OrphanFound"), "OrphanOwnerFound"]);
    const { orphans: text, summary } = await report();
    expect(summary).toBe("5 orphaned Azure resources: 5 marked, 0 deleting");
    expect(text?.split("\n")).toHaveLength(5);
    expect(text).toContain(`cluster=${gone.cluster} uid=${gone.id} state=marked since=${T0.toISOString()}`);
    expect(await metric(registry, "hcp_azure_orphans", { state: "marked" })).toBe(5);
    expect(await metric(registry, "hcp_azure_orphans", { kind: "DnsRecordSet", state: "marked" })).toBe(1);
  });

  it("keeps them through the grace period, telling nothing twice", async () => {
    clock = new Date(T0.getTime() + HOUR - 1000);
    emu.clearRequests();
    const result = await decided(first());
    expect(result).toMatchObject({ marked: 0, unmarked: 0, deleted: 0 });
    expect(result.orphans).toHaveLength(5);
    expect(emu.requests(writes)).toEqual([]);
    for (const name of orphans) expect(found(name)).toBeDefined();
    expect(await reasons()).toEqual([...Array<string>(5).fill("OrphanFound"), "OrphanOwnerFound"]);
  });

  it("deletes them after it, in a sweep that starts afresh (the mark is on the resource), and nothing else", async () => {
    clock = new Date(T0.getTime() + HOUR);
    emu.clearRequests();
    const after = new Registry();
    const result = await decided(newSweep(after));
    expect(result).toMatchObject({ marked: 0, unmarked: 0, deleted: 5 });
    for (const name of orphans) expect(found(name)).toBeUndefined();
    expect(found(`gonetoo.${parentZone.name}`)).toBeUndefined();
    expect(found("gone", "/NS")).toBeUndefined();
    // The load balancer went before the public IP it used.
    const deletes = emu.requests({ method: "DELETE" }).map((r) => r.path.toLowerCase());
    const at = (part: string): number => deletes.findIndex((p) => p.includes(part));
    expect(at("loadbalancers/gone-lb")).toBeGreaterThanOrEqual(0);
    expect(at("loadbalancers/gone-lb")).toBeLessThan(at("publicipaddresses/gone-ip"));
    // Nothing else was written: live clusters', the region's, and someone else's resources stay as they were.
    const written = emu.requests(writes).map((r) => r.path.toLowerCase());
    expect(written.filter((p) => !/gone/.test(p))).toEqual([]);
    for (const name of [
      "live-rg",
      "back-rg",
      "hcp-region",
      "hcp.example.com",
      "theirs-ip",
      "their-rg",
      "byo-rg",
      "elsewhere-rg",
      "c.westus3.example.org",
    ])
      expect(found(name)).toBeDefined();
    expect(tagsOf("elsewhere-rg")).not.toHaveProperty(ORPHANED_SINCE_TAG);
    expect(tagsOf("their-rg")).toEqual({ team: "a" });
    expect(tagsOf("theirs-ip")).toEqual({});
    expect(tagsOf("live", "/NS")).not.toHaveProperty(ORPHANED_SINCE_TAG);
    expect((await reasons()).filter((r) => r === "OrphanDeleted")).toHaveLength(5);
    expect(await report()).toEqual({
      summary: "0 orphaned Azure resources: 0 marked, 0 deleting",
      orphans: "",
    });
    expect(await metric(after, "hcp_azure_orphans_deleted_total", {})).toBe(5);
    expect(await metric(after, "hcp_azure_orphans", {})).toBe(0);
  });
});
