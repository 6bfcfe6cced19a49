/**
 * Soft delete and undelete (docs/operations.md): with a retention, a Ready cluster with a node pool
 * that is deleted leaves the service cluster at once and its HostedCluster leaves the management
 * cluster, while its Azure resources (as ARM describes them, public IP addresses included: a
 * resource made again would get another), its OIDC issuer keys and its keyring Secret stay, recorded
 * in `hcp-deleted-<clusterID>`; `hcpctl cluster undelete` inside the retention brings it back Ready
 * under the same ID with the same Azure resources and issuer keys, restored from its last backup,
 * its node pool back. Deleted again, it is purged once the retention ends (Azure resources, issuer,
 * keyring and record gone), and an undelete after that is refused.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigMapResource, SecretResource } from "../../operators/api/core.ts";
import { HostedClusterResource } from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  decodeDeletedCluster,
  deletedClusterRecordName,
  type DeletedClusterRecord,
  type RecordConfigMap,
} from "../../operators/api/v1alpha1/deleted-cluster.ts";
import {
  HcpClusterResource,
  NodePoolResource,
  ORIGINAL_UID_ANNOTATION,
  originalUid,
  type HcpCluster,
  type NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { clusterInfo } from "../support/region.ts";
import { sampleCluster, sampleFixedPool } from "../support/samples.ts";
import { installVeleroStorage, type VeleroStorage } from "../support/velero.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const service = clientFor("service");
const customer = `softdel-${process.pid}`;
const NAME = "sd";
const POOL = "sd-workers";
const READY_MS = 90_000;
/** Long enough for the undelete to follow the deletion, short enough for the test to see a purge. */
const RETENTION_MS = 30_000;
const kubeconfig = clusterInfo("service").kubeconfigPath;

let running: TestStack;
let velero: VeleroStorage | undefined;

beforeAll(async () => {
  running = await startTestStack("softdel", {
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    softDelete: { retentionMs: RETENTION_MS, purgeIntervalMs: 1_000 },
  });
  velero = await installVeleroStorage(running, "hcpsoftdellocal");
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  await service.delete(NodePoolResource, { name: POOL, namespace: customer }).catch(() => undefined);
  await service.delete(HcpClusterResource, { name: NAME, namespace: customer }).catch(() => undefined);
  await eventually(
    "the cluster deleted",
    async () => !(await service.find(HcpClusterResource, NAME, customer)),
    READY_MS,
  ).catch(() => undefined);
  if (placed.id)
    await service
      .delete(ConfigMapResource, {
        name: deletedClusterRecordName(placed.id),
        namespace: running.stack.namespace,
      })
      .catch(() => undefined);
  await running?.stop();
  await velero?.remove();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
});

const placed = { id: "", mgmt: "", hostedNamespace: "", hostedName: "", lastBackup: "" };
const before: { azure: Record<string, unknown>; jwks?: string; keyringUid?: string } = { azure: {} };

function newCluster(): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: NAME, namespace: customer };
  c.spec.dns.baseDomainPrefix = `sd${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `softdel-${process.pid}-managed`;
  c.spec.platform.azure.tenantId = randomUUID();
  delete c.spec.placement;
  return c;
}

function newPool(): NodePool {
  const p = sampleFixedPool();
  p.metadata = { name: POOL, namespace: customer };
  p.spec.clusterRef = { name: NAME };
  return p;
}

const getCluster = (): Promise<HcpCluster | undefined> =>
  service.find<HcpCluster>(HcpClusterResource, NAME, customer);
const isReady = (o: { status?: { conditions?: Array<{ type: string; status: string }> } } | undefined) =>
  o?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") === true;
const hcpctl = (...args: string[]) =>
  runHcpctl(
    "--kubeconfig",
    kubeconfig,
    ...args,
    "-n",
    customer,
    "--operators-namespace",
    running.stack.namespace,
  );

/** The Azure resources tagged with the cluster's ID, by resource ID, as ARM describes them. */
function azureOf(id: string): Record<string, unknown> {
  const mine = running.arm.resources().filter((r) => Object.values(r.tags).includes(id));
  return Object.fromEntries(mine.map((r) => [r.id.toLowerCase(), { ...r, provisioningState: undefined }]));
}

function jwksOf(id: string): string | undefined {
  return running.storage.blobs().find((b) => b.name.endsWith(`${id}/openid/v1/jwks`))?.body;
}

async function keyringUid(id: string): Promise<string | undefined> {
  const secret = await service.find(SecretResource, `sa-signing-key-${id}`, running.stack.namespace);
  return secret?.metadata.uid;
}

async function record(id: string): Promise<DeletedClusterRecord | undefined> {
  const cm = await service.find<RecordConfigMap>(
    ConfigMapResource,
    deletedClusterRecordName(id),
    running.stack.namespace,
  );
  return cm ? decodeDeletedCluster(cm) : undefined;
}

async function hostedCluster(): Promise<unknown> {
  return clientFor(placed.mgmt).find(HostedClusterResource, placed.hostedName, placed.hostedNamespace);
}

async function deleteAndWaitGone(): Promise<void> {
  await service.delete(HcpClusterResource, { name: NAME, namespace: customer });
  await eventually("the HcpCluster gone", async () => !(await getCluster()), READY_MS);
}

describe("soft delete and undelete of a cluster", () => {
  it("keeps a deleted cluster's Azure resources, issuer and keys, recorded, while it leaves both clusters", async () => {
    await service.create(HcpClusterResource, newCluster());
    await service.create(NodePoolResource, newPool());
    await eventually("the cluster Ready", async () => isReady(await getCluster()), READY_MS);
    await eventually(
      "the node pool Ready",
      async () => isReady(await service.find<NodePool>(NodePoolResource, POOL, customer)),
      READY_MS,
    );
    await eventually(
      "a completed backup",
      async () => ((await getCluster())?.status?.backup?.recent?.length ?? 0) > 0,
      READY_MS,
    );
    const c = (await getCluster())!;
    Object.assign(placed, {
      id: originalUid(c),
      mgmt: c.status?.managementCluster ?? "",
      hostedNamespace: c.status?.hostedClusterNamespace ?? "",
      hostedName: c.spec.dns.baseDomainPrefix,
    });
    before.azure = azureOf(placed.id);
    before.jwks = jwksOf(placed.id);
    before.keyringUid = await keyringUid(placed.id);
    expect(Object.keys(before.azure).length).toBeGreaterThan(2);
    expect(before.jwks).toContain('"kid"');
    expect(before.keyringUid).toBeTruthy();
    running.arm.clearRequests();

    await deleteAndWaitGone();
    expect(await service.find(NodePoolResource, POOL, customer)).toBeUndefined();
    await eventually(
      "the HostedCluster gone from the management cluster",
      async () => !(await hostedCluster()),
      READY_MS,
    );
    const kept = await record(placed.id);
    expect(kept).toMatchObject({
      clusterID: placed.id,
      namespace: customer,
      cluster: { name: NAME },
      managementCluster: placed.mgmt,
      nodePools: [{ name: POOL, spec: { clusterRef: { name: NAME } } }],
    });
    placed.lastBackup = kept?.lastBackup ?? "";
    expect(placed.lastBackup).toMatch(new RegExp(`^${placed.id}-backup-\\d{14}$`));
    expect(Date.parse(kept?.purgeAfter ?? "") - Date.parse(kept?.deletedAt ?? "")).toBe(RETENTION_MS);
    // Nothing of Azure was deleted: the same resources, the same addresses.
    expect(running.arm.requests({ method: "DELETE" })).toEqual([]);
    expect(azureOf(placed.id)).toEqual(before.azure);
    expect(jwksOf(placed.id)).toBe(before.jwks);
    expect(await keyringUid(placed.id)).toBe(before.keyringUid);

    const listed = await hcpctl("cluster", "deleted");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`${NAME}\\s+${placed.id}\\s+Undeletable\\s.*${placed.lastBackup}`),
    );
  });

  it("undeletes it inside the retention: Ready under the same ID, Azure resources and issuer keys, restored from its last backup, its node pool back", async () => {
    const out = await hcpctl("cluster", "undelete", NAME);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`undeleted with its ID ${placed.id}`);
    expect(out.stdout).toContain(`restored from ${placed.lastBackup}`);
    expect(await record(placed.id)).toBeUndefined();

    const back = (await getCluster())!;
    expect(back.metadata.annotations?.[ORIGINAL_UID_ANNOTATION]).toBe(placed.id);
    expect(back.metadata.uid).not.toBe(placed.id);
    expect(back.spec.restore).toEqual({ backupName: placed.lastBackup });
    await eventually("the undeleted cluster Ready", async () => isReady(await getCluster()), READY_MS);
    await eventually(
      "the restore from the last backup Completed",
      async () => (await getCluster())?.status?.restore?.phase === "Completed",
      READY_MS,
    );
    await eventually(
      "the node pool Ready again",
      async () => isReady(await service.find<NodePool>(NodePoolResource, POOL, customer)),
      READY_MS,
    );
    const ready = (await getCluster())!;
    expect(ready.status?.clusterID).toBe(placed.id);
    expect(ready.status?.hostedClusterNamespace).toBe(placed.hostedNamespace);
    expect(await hostedCluster()).toBeTruthy();
    expect(azureOf(placed.id)).toEqual(before.azure);
    expect(jwksOf(placed.id)).toBe(before.jwks);
    expect(await keyringUid(placed.id)).toBe(before.keyringUid);
    expect(running.arm.requests({ method: "DELETE" })).toEqual([]);
  });

  it("purges it once the retention ends, and refuses an undelete after", async () => {
    await deleteAndWaitGone();
    const kept = await record(placed.id);
    // The record of this deletion, not the one the undelete dropped: written for the undeleted object.
    expect(kept?.uid).toBeTruthy();
    expect(kept?.uid).not.toBe(placed.id);
    expect(kept?.purgeAfter).toBeTruthy();
    expect(azureOf(placed.id)).toEqual(before.azure);

    await eventually("the record purged", async () => !(await record(placed.id)), RETENTION_MS + READY_MS);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(kept?.purgeAfter ?? ""));
    expect(azureOf(placed.id)).toEqual({});
    expect(jwksOf(placed.id)).toBeUndefined();
    expect(await keyringUid(placed.id)).toBeUndefined();

    const refused = await hcpctl("cluster", "undelete", NAME);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`no soft-deleted cluster ${customer}/${NAME}`);
    expect(await getCluster()).toBeUndefined();
  });
});
