/**
 * Hosted control-plane backups as ARO HCP takes them: a Ready cluster's work carries a Velero
 * Schedule to its management cluster (Velero's own CRD validates it) for the cluster's two
 * namespaces; the HyperShift simulator plays Velero (velero.ts) against a backup storage account
 * of its own (a second storage emulator, as ARO HCP keeps backups in a dedicated account), and the
 * Schedule's status comes back through the work's feedback onto status.backup and BackupsHealthy.
 * Pause reaches the Schedule and stops the backups; a simulated failure turns BackupsHealthy False
 * saying why; a bad cron is refused by the HcpCluster CRD naming spec.backup.schedule.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import {
  BACKUP_CONTAINER,
  PERIOD_OVERRIDE_ANNOTATION,
  SIMULATE_FAILURE_ANNOTATION,
  backupObjectName,
} from "../../hack/hypershift-simulator/velero.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import {
  BackupResource,
  SCHEDULE_NAME_LABEL,
  ScheduleResource,
  VELERO_NAMESPACE,
  type Backup,
  type Schedule,
} from "../../operators/api/velero/v1/index.ts";
import { KubeApiError } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { sampleCluster } from "../support/samples.ts";
import { queueAdds, reconciledSince } from "../support/metrics.ts";
import { installVeleroStorage, type VeleroStorage } from "../support/velero.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";
import { SIMULATOR_NAME } from "../../hack/hypershift-simulator/controller.ts";

const service = clientFor("service");
const customer = `backups-${process.pid}`;
const NAME = "bk";
const READY_MS = 90_000;
/** The simulator's backup interval once a test shortens it (PERIOD_OVERRIDE_ANNOTATION). */
const FAST_PERIOD_MS = 400;

let running: TestStack;
let backups: StorageEmulator;
let velero: VeleroStorage | undefined;

beforeAll(async () => {
  running = await startTestStack("backups", { simulator: { provisionDelayMs: 300, deleteDelayMs: 100 } });
  velero = await installVeleroStorage(running, "hcpbackupslocal");
  backups = velero.backups;
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

const healthOf = (c: HcpCluster) => c.status?.conditions?.find((x) => x.type === "BackupsHealthy");

function newCluster(): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: NAME, namespace: customer };
  c.spec.dns.baseDomainPrefix = `bk${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `backups-${process.pid}-managed`;
  c.spec.platform.azure.tenantId = randomUUID();
  delete c.spec.placement;
  return c;
}

interface Placed {
  uid: string;
  prefix: string;
  mgmt: string;
  schedule: string;
  hostedNamespace: string;
}

const placed = {} as Placed;

async function scheduleOf(): Promise<Schedule | undefined> {
  return clientFor(placed.mgmt).find<Schedule>(ScheduleResource, placed.schedule, VELERO_NAMESPACE);
}

async function backupsOf(): Promise<Backup[]> {
  const list = await clientFor(placed.mgmt).list<Backup>(BackupResource, {
    namespace: VELERO_NAMESPACE,
    labelSelector: `${SCHEDULE_NAME_LABEL}=${placed.schedule}`,
  });
  return list.items;
}

/** Waits for Ready and records where the cluster went. */
async function readyCluster(): Promise<HcpCluster> {
  const isReady = (c: HcpCluster) =>
    c.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True");
  await eventually("the cluster Ready", async () => isReady(await getCluster()) === true, READY_MS);
  const ready = await getCluster();
  placed.uid = ready.metadata.uid ?? "";
  placed.prefix = ready.spec.dns.baseDomainPrefix;
  placed.mgmt = ready.status?.managementCluster ?? "";
  placed.hostedNamespace = ready.status?.hostedClusterNamespace ?? "";
  placed.schedule = `${placed.uid}-backup`;
  return ready;
}

async function completedBackups(): Promise<Backup[]> {
  return (await backupsOf()).filter((b) => b.status?.phase === "Completed");
}

/** The object listing a Backup wrote to the backup storage account, by namespace. */
function storedListing(backup: string): Record<string, string[]> {
  const blob = backups
    .blobs()
    .find((b) => b.container === BACKUP_CONTAINER && b.name === backupObjectName(backup));
  return (JSON.parse(blob?.body ?? "{}") as { namespaces?: Record<string, string[]> }).namespaces ?? {};
}

async function healthyWithTime(): Promise<boolean> {
  const c = await getCluster();
  return healthOf(c)?.status === "True" && Boolean(c.status?.backup?.lastBackupTime);
}

/** Annotations on the management cluster's Schedule, as an SRE or a test sets them (null removes). */
async function annotateSchedule(annotations: Record<string, string | null>): Promise<void> {
  await clientFor(placed.mgmt).mergePatch(
    ScheduleResource,
    { name: placed.schedule, namespace: VELERO_NAMESPACE },
    { metadata: { annotations } },
  );
}

describe("hosted control-plane backups", () => {
  it("gives a Ready cluster a Velero Schedule for its two namespaces that Velero's CRD accepts", async () => {
    await service.create(HcpClusterResource, newCluster());
    const ready = await readyCluster();
    const prefix = ready.spec.dns.baseDomainPrefix;
    const schedule = await scheduleOf();
    expect(schedule?.spec).toMatchObject({
      schedule: "0 */1 * * *",
      paused: false,
      template: {
        includedNamespaces: [placed.hostedNamespace, `${placed.hostedNamespace}-${prefix}`],
        ttl: "168h0m0s",
      },
    });
    expect(schedule?.metadata.labels?.["api.openshift.com/id"]).toBe(ready.metadata.uid);
  });

  it("backs up at once: the Backup's contents in storage, its time and BackupsHealthy on the cluster", async () => {
    // Velero backs up at once when a Schedule is created.
    await eventually("a completed Backup", async () => (await completedBackups()).length > 0, READY_MS);
    const [first] = await completedBackups();
    const name = first?.metadata.name ?? "";
    expect(name).toMatch(new RegExp(`^${placed.schedule}-\\d{14}$`));
    expect(first?.metadata.labels?.["api.openshift.com/id"]).toBe(placed.uid);
    expect(storedListing(name)[placed.hostedNamespace]).toContain(`HostedCluster/${placed.prefix}`);

    await eventually("BackupsHealthy True with the last backup time", healthyWithTime, READY_MS);
    const c = await getCluster();
    expect(c.status?.backup).toMatchObject({ phase: "Enabled", paused: false });
    expect(Date.parse(c.status?.backup?.lastBackupTime ?? "")).toBeGreaterThan(0);
  });

  it("reports a failed backup as BackupsHealthy False with the reason, and recovers with the next one", async () => {
    await annotateSchedule({
      [PERIOD_OVERRIDE_ANNOTATION]: String(FAST_PERIOD_MS),
      [SIMULATE_FAILURE_ANNOTATION]: "true",
    });
    await eventually(
      "BackupsHealthy False BackupFailed",
      async () => healthOf(await getCluster())?.reason === "BackupFailed",
      READY_MS,
    );
    const failed = healthOf(await getCluster());
    expect(failed?.status).toBe("False");
    expect(failed?.message).toContain("Failed");
    expect(failed?.message).toContain("simulate-backup-failure");
    expect((await backupsOf()).some((b) => b.status?.phase === "Failed")).toBe(true);

    await annotateSchedule({ [SIMULATE_FAILURE_ANNOTATION]: null });
    await eventually(
      "BackupsHealthy True again",
      async () => healthOf(await getCluster())?.status === "True",
      READY_MS,
    );
  });

  it("pauses: spec.backup.paused reaches the Schedule and the status, and no backup is taken", async () => {
    await service.mergePatch(
      HcpClusterResource,
      { name: NAME, namespace: customer },
      { spec: { backup: { paused: true } } },
    );
    await eventually("the Schedule paused", async () => (await scheduleOf())?.spec.paused === true, READY_MS);
    await eventually(
      "the status paused",
      async () => {
        const c = await getCluster();
        return c.status?.backup?.paused === true && healthOf(c)?.reason === "Paused";
      },
      READY_MS,
    );
    const before = (await backupsOf()).length;
    // The evidence that none is taken: a reconcile of the paused Schedule that began after its next
    // backup was due (an unpaused one backs up then). A paused Schedule is not looked at on its
    // own, so a touch of it brings that reconcile.
    const lastBackup = Date.parse((await scheduleOf())?.status?.lastBackup ?? "");
    await eventually("the next backup due", () => Date.now() > lastBackup + FAST_PERIOD_MS, READY_MS);
    const queue = `${SIMULATOR_NAME}-velero-${placed.mgmt}`;
    const addsBefore = await queueAdds(queue);
    await clientFor(placed.mgmt).mergePatch(
      ScheduleResource,
      { name: placed.schedule, namespace: VELERO_NAMESPACE },
      { metadata: { annotations: { "hcp.aro.dev/test-touch": randomUUID() } } },
    );
    await eventually("the paused Schedule looked at again", reconciledSince(queue, addsBefore), READY_MS);
    expect((await backupsOf()).length).toBe(before);

    await service.mergePatch(
      HcpClusterResource,
      { name: NAME, namespace: customer },
      { spec: { backup: { paused: false } } },
    );
    await eventually("backups again", async () => (await backupsOf()).length > before, READY_MS);
    await eventually(
      "BackupsHealthy True after the pause",
      async () => healthOf(await getCluster())?.status === "True",
      READY_MS,
    );
  });

  it("refuses a bad cron in the HcpCluster CRD, naming spec.backup.schedule", async () => {
    const refusal = await service
      .mergePatch(
        HcpClusterResource,
        { name: NAME, namespace: customer },
        { spec: { backup: { schedule: "every hour" } } },
      )
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refusal).toBeInstanceOf(KubeApiError);
    expect(String((refusal as KubeApiError).message)).toContain("spec.backup.schedule");
    const outOfRange = await service
      .mergePatch(
        HcpClusterResource,
        { name: NAME, namespace: customer },
        { spec: { backup: { schedule: "0 24 * * *" } } },
      )
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(String((outOfRange as KubeApiError).message)).toContain("spec.backup.schedule");
    const tooLong = await service
      .mergePatch(
        HcpClusterResource,
        { name: NAME, namespace: customer },
        { spec: { backup: { retentionHours: 5000 } } },
      )
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(String((tooLong as KubeApiError).message)).toContain("spec.backup.retentionHours");
  });
});
