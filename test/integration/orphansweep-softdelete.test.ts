/**
 * The orphan sweep and soft-deleted clusters: a deleted cluster whose record
 * (hcp-deleted-<clusterID>, api/v1alpha1/deleted-cluster.ts) is still there owns its Azure
 * resources as a live cluster does, so the sweep neither marks nor deletes them; once the record
 * goes (purged, or deleted by hand), they are orphans: marked, then deleted after the grace period.
 * The real Azure SDK over https to the ARM emulator and the service cluster's kube-apiserver.
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
import {
  deletedClusterRecordName,
  encodeDeletedCluster,
} from "../../operators/api/v1alpha1/deleted-cluster.ts";
import type { HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import {
  createAzureClients,
  ensureDnsZone,
  ensureNsDelegation,
  ensureResourceGroup,
  type AzureClients,
  type Owner,
} from "../../operators/azure/index.ts";
import { OrphanSweep, type SweepResult } from "../../operators/orphansweep/controller.ts";
import { ORPHANED_SINCE_TAG } from "../../operators/orphansweep/inventory.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";

const HOUR = 3_600_000;
const location = "eastus";
const client = clientFor("service");
const sample = load(
  await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8"),
) as HcpCluster;
const sub = sample.spec.platform.azure.subscriptionId;
const parentSub = randomUUID();
const parentZone = { subscriptionId: parentSub, resourceGroup: "hcp-region", name: "hcp.example.com" };

let emu: ArmEmulator;
let azure: AzureClients;
let workDir: string;
let ns: { name: string; remove(): Promise<void> };
const clusters = new ClusterRegistry();
let clock = new Date("2026-11-28T12:00:00Z");
const softDeleted: Owner = { id: randomUUID(), cluster: "" };
const group = `sd-${process.pid}-rg`;

function newSweep(): OrphanSweep {
  return new OrphanSweep({
    cluster: clusters.get("service"),
    azure,
    parentZone,
    namespace: ns.name,
    graceMs: HOUR,
    // No live cluster names the subscription here: it is swept as a process that saw one would.
    subscriptions: [sub],
    now: () => clock,
    registry: new Registry(),
  });
}

async function decided(sweep: OrphanSweep): Promise<Extract<SweepResult, { decided: true }>> {
  const result = await sweep.sweep();
  if (!result.decided) throw new Error(`the sweep decided nothing: ${result.reason}`);
  return result;
}

const groupTags = () => emu.resources().find((r) => r.name === group)?.tags;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "orphansweep-softdelete-"));
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
  ns = await tempNamespace(client, "ossd");
  softDeleted.cluster = `${ns.name}/sd`;
  clusters.add("service", { path: clusterInfo("service").kubeconfigPath });
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
  // The soft-deleted cluster's managed group and delegation, kept for an undelete.
  await ensureResourceGroup(azure, { subscriptionId: sub, name: group, location, owner: softDeleted });
  await ensureNsDelegation(azure, {
    subscriptionId: parentSub,
    resourceGroup: "hcp-region",
    parentZone: parentZone.name,
    childLabel: "sd",
    nameServers: ["ns1.example.net"],
    owner: softDeleted,
  });
  const cluster = { name: "sd", spec: sample.spec };
  await client.create(
    ConfigMapResource,
    encodeDeletedCluster(
      {
        clusterID: softDeleted.id,
        uid: softDeleted.id,
        namespace: ns.name,
        cluster,
        nodePools: [],
        externalAuths: [],
        deletedAt: clock.toISOString(),
        purgeAfter: new Date(clock.getTime() + HOUR).toISOString(),
      },
      ns.name,
    ),
  );
}, 60_000);

afterAll(async () => {
  clusters.stopAll();
  await ns?.remove();
  await emu?.stop();
  await rm(workDir, { recursive: true, force: true });
});

describe("the orphan sweep and soft-deleted clusters", () => {
  it("leaves a soft-deleted cluster's resources alone while its record is there, even past the grace period", async () => {
    const sweep = newSweep();
    await eventually("the HcpCluster cache to sync", () => clusters.get("service").hasSynced());
    expect(await decided(sweep)).toMatchObject({ marked: 0, deleted: 0 });
    clock = new Date(clock.getTime() + 2 * HOUR);
    expect(await decided(sweep)).toMatchObject({ marked: 0, deleted: 0 });
    expect(groupTags()).not.toHaveProperty(ORPHANED_SINCE_TAG);
  });

  it("marks them once the record is gone, and deletes them after the grace period", async () => {
    await client.delete(ConfigMapResource, {
      name: deletedClusterRecordName(softDeleted.id),
      namespace: ns.name,
    });
    const sweep = newSweep();
    expect(await decided(sweep)).toMatchObject({ marked: 2, deleted: 0 });
    expect(groupTags()?.[ORPHANED_SINCE_TAG]).toBe(clock.toISOString());
    clock = new Date(clock.getTime() + HOUR + 1);
    expect((await decided(sweep)).deleted).toBeGreaterThan(0);
    await eventually("the group deleted", () => groupTags() === undefined, 20_000);
  });
});
