/**
 * A restore of one hosted control plane from a chosen backup, by command: a Ready cluster with a
 * completed backup lists it (`hcpctl cluster backups`, from status.backup.recent) and is restored
 * from it by `hcpctl cluster restore --backup … --wait`: the Velero Restore reaches the management
 * cluster (the HyperShift simulator plays Velero, velero-restore.ts, reading the backup's contents
 * from a second storage emulator), the HostedCluster is paused while it runs and resumed after,
 * status.restore ends Completed with the objects restored, and the cluster tells RestoreStarted and
 * RestoreCompleted. A backup that does not exist ends FailedValidation naming it; another
 * cluster's backup is refused by the API server naming spec.restore.backupName.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAUSED_DURING_RESTORE_ANNOTATION } from "../../hack/hypershift-simulator/velero-restore.ts";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { RestoreResource, VELERO_NAMESPACE, type Restore } from "../../operators/api/velero/v1/index.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { KubeApiError } from "../../operators/runtime/kube.ts";
import { eventType } from "../../operators/runtime/events.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { sampleCluster } from "../support/samples.ts";
import { installVeleroStorage, type VeleroStorage } from "../support/velero.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const service = clientFor("service");
const customer = `restore-${process.pid}`;
const NAME = "rs";
const READY_MS = 90_000;
const kubeconfig = clusterInfo("service").kubeconfigPath;

let running: TestStack;
let velero: VeleroStorage | undefined;

beforeAll(async () => {
  running = await startTestStack("restore", { simulator: { provisionDelayMs: 300, deleteDelayMs: 100 } });
  velero = await installVeleroStorage(running, "hcprestorelocal");
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  await service.delete(HcpClusterResource, { name: NAME, namespace: customer }).catch(() => undefined);
  await eventually(
    "the cluster deleted",
    async () => !(await service.find(HcpClusterResource, NAME, customer)),
    READY_MS,
  ).catch(() => undefined);
  await running?.stop();
  await velero?.remove();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
});

const getCluster = async (): Promise<HcpCluster> =>
  (await service.find<HcpCluster>(HcpClusterResource, NAME, customer)) ?? ({} as HcpCluster);

function newCluster(): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: NAME, namespace: customer };
  c.spec.dns.baseDomainPrefix = `rs${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `restore-${process.pid}-managed`;
  c.spec.platform.azure.tenantId = randomUUID();
  delete c.spec.placement;
  return c;
}

const placed = { clusterID: "", mgmt: "", hostedNamespace: "", hostedName: "" };

async function hostedCluster(): Promise<HostedCluster | undefined> {
  return clientFor(placed.mgmt).find<HostedCluster>(
    HostedClusterResource,
    placed.hostedName,
    placed.hostedNamespace,
  );
}

async function restoreOnManagement(name: string): Promise<Restore | undefined> {
  return clientFor(placed.mgmt).find<Restore>(RestoreResource, name, VELERO_NAMESPACE);
}

const hcpctl = (...args: string[]) => runHcpctl("--kubeconfig", kubeconfig, ...args);

type CoreEvent = KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } };

async function restoreEvents(): Promise<CoreEvent[]> {
  const events = (await service.list<CoreEvent>(eventType, { namespace: customer })).items;
  return events.filter((e) => e.involvedObject?.name === NAME && e.reason?.startsWith("Restore"));
}

/** status.restore Completed from the backup, and the Restore the management cluster was given. */
async function expectCompletedFrom(backup: string): Promise<void> {
  const status = (await getCluster()).status?.restore ?? { restoreName: "", completedAt: "" };
  expect(status).toMatchObject({ backupName: backup, phase: "Completed" });
  const { itemsRestored = 0, itemsTotal } = status as { itemsRestored?: number; itemsTotal?: number };
  expect(itemsRestored).toBeGreaterThan(0);
  expect(itemsRestored).toBe(itemsTotal);
  expect(Date.parse(status.completedAt ?? "")).toBeGreaterThan(0);

  // The Restore on the management cluster: the backup, the two namespaces, existing objects updated.
  const restore = await restoreOnManagement(status.restoreName);
  if (!restore) throw new Error(`Restore ${status.restoreName} not on ${placed.mgmt}`);
  expect(restore.spec).toMatchObject({
    backupName: backup,
    existingResourcePolicy: "update",
    includedNamespaces: [placed.hostedNamespace, `${placed.hostedNamespace}-${placed.hostedName}`],
  });
  const { labels = {}, annotations = {}, name = "" } = restore.metadata;
  expect(labels["api.openshift.com/id"]).toBe(placed.clusterID);
  expect(name.length).toBeLessThanOrEqual(63);
  // Velero found the HostedCluster paused while it restored; after, it resumes.
  expect(annotations[PAUSED_DURING_RESTORE_ANNOTATION]).toBe("true");
}

describe("restoring one hosted cluster from a chosen backup", () => {
  it("lists a Ready cluster's completed backups by name, newest first", async () => {
    await service.create(HcpClusterResource, newCluster());
    const isReady = (c: HcpCluster) =>
      c.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") === true;
    await eventually("the cluster Ready", async () => isReady(await getCluster()), READY_MS);
    await eventually(
      "a completed backup on the status",
      async () => ((await getCluster()).status?.backup?.recent?.length ?? 0) > 0,
      READY_MS,
    );
    const c = await getCluster();
    placed.clusterID = c.status?.clusterID ?? "";
    placed.mgmt = c.status?.managementCluster ?? "";
    placed.hostedNamespace = c.status?.hostedClusterNamespace ?? "";
    placed.hostedName = c.spec.dns.baseDomainPrefix;
    const [newest] = c.status?.backup?.recent ?? [];
    expect(newest).toMatch(new RegExp(`^${placed.clusterID}-backup-\\d{14}$`));
    const listed = await hcpctl("cluster", "backups", NAME, "-n", customer);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(newest);
  });

  it("restores it from that backup by command: paused while Velero restores, Completed with the objects, resumed", async () => {
    const [backup = ""] = (await getCluster()).status?.backup?.recent ?? [];
    const out = await hcpctl(
      "cluster",
      "restore",
      NAME,
      "-n",
      customer,
      "--backup",
      backup,
      "--wait",
      "--timeout",
      "90s",
    );
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`restore from ${backup}: Completed`);

    await expectCompletedFrom(backup);
    await eventually(
      "the HostedCluster resumed",
      async () => (await hostedCluster())?.spec.pausedUntil === undefined,
      READY_MS,
    );
    await eventually(
      "RestoreStarted and RestoreCompleted told once each",
      async () => {
        const reasons = (await restoreEvents()).map((e) => e.reason).sort();
        return reasons.join(",") === "RestoreCompleted,RestoreStarted";
      },
      READY_MS,
    );
  });

  it("ends FailedValidation naming a backup that does not exist, and resumes the HostedCluster", async () => {
    const missing = `${placed.clusterID}-backup-19990101000000`;
    const out = await hcpctl(
      "cluster",
      "restore",
      NAME,
      "-n",
      customer,
      "--backup",
      missing,
      "--wait",
      "--timeout",
      "90s",
    );
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("FailedValidation");
    expect(out.stderr).toContain(missing);
    const status = (await getCluster()).status?.restore;
    expect(status).toMatchObject({ backupName: missing, phase: "FailedValidation" });
    expect(status?.failureReason).toContain(`"${missing}" not found`);
    await eventually(
      "the HostedCluster not paused",
      async () => (await hostedCluster())?.spec.pausedUntil === undefined,
      READY_MS,
    );
    await eventually(
      "RestoreFailed told",
      async () =>
        (await restoreEvents()).some((e) => e.reason === "RestoreFailed" && e.message?.includes(missing)),
      READY_MS,
    );
  });

  it("clears the restore: the Restore leaves the management cluster and status.restore goes", async () => {
    const name = (await getCluster()).status?.restore?.restoreName ?? "";
    const out = await hcpctl("cluster", "restore", NAME, "-n", customer, "--clear");
    expect(out.code).toBe(0);
    await eventually("the Restore gone", async () => !(await restoreOnManagement(name)), READY_MS);
    await eventually("status.restore gone", async () => !(await getCluster()).status?.restore, READY_MS);
  });

  it("refuses another cluster's backup at the API server, naming spec.restore.backupName", async () => {
    const other = `${randomUUID()}-backup-20260101000000`;
    const refusal = await service
      .mergePatch(
        HcpClusterResource,
        { name: NAME, namespace: customer },
        { spec: { restore: { backupName: other } } },
      )
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refusal).toBeInstanceOf(KubeApiError);
    expect(String((refusal as KubeApiError).message)).toContain("spec.restore.backupName");
    const byCommand = await hcpctl("cluster", "restore", NAME, "-n", customer, "--backup", other);
    expect(byCommand.code).toBe(1);
    expect(byCommand.stderr).toContain("spec.restore.backupName");
    expect((await getCluster()).spec.restore).toBeUndefined();
  });
});
