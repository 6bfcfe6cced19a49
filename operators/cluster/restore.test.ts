import { describe, expect, it } from "vitest";
import type { HcpCluster, HcpClusterRestoreStatus } from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import type { ManifestWorkObject } from "../api/work/v1.ts";
import type { Release } from "../releases/catalog.ts";
import { sampleCluster, sampleRegion } from "../../test/support/samples.ts";
import { BACKUP_FEEDBACK, backupReport } from "./backup.ts";
import { hostedClusterWork } from "./hostedcluster.ts";
import { newSigningKey } from "./oidc.ts";
import {
  RESTORE_FEEDBACK,
  observedRestore,
  restoreEvents,
  restoreFeedbackConfig,
  restoreInput,
  restoreManifest,
  restoreName,
  restoreReport,
  restoreStatus,
  restoreUnderway,
} from "./restore.ts";
import { inputsDigest, type WorkInputs } from "./work-template.ts";

const UID = "0b6c1b6e-1111-4222-8333-444455556666";
const BACKUP = `${UID}-backup-20260527030000`;

function cluster(restore?: string, status?: HcpClusterRestoreStatus): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "c", namespace: "ns", uid: UID };
  if (restore) c.spec.restore = { backupName: restore };
  if (status) c.status = { restore: status };
  return c;
}

const names = clusterNames(cluster(), sampleRegion());

function workWith(
  values: Record<string, string | number>,
  name = restoreName(names, BACKUP),
): ManifestWorkObject {
  const feedback = Object.entries(values).map(([n, v]) => ({
    name: n,
    fieldValue:
      typeof v === "number"
        ? { type: "Integer" as const, integer: v }
        : { type: "String" as const, string: v },
  }));
  return {
    metadata: { name: "w" },
    status: {
      resourceStatus: {
        manifests: [
          {
            resourceMeta: {
              group: "velero.io",
              kind: "Restore",
              resource: "restores",
              name,
              namespace: "velero",
            },
            statusFeedback: { values: feedback },
            conditions: [],
          },
        ],
      },
    },
  } as unknown as ManifestWorkObject;
}

describe("the Restore a cluster's work carries", () => {
  it("is none without spec.restore, and nothing pauses", () => {
    const c = cluster();
    expect(restoreManifest(c, names)).toBeUndefined();
    expect(restoreFeedbackConfig(c, names)).toEqual([]);
    expect(restoreUnderway(c)).toBe(false);
    expect(restoreInput(c)).toBe("");
  });

  it("restores the two namespaces from the named backup, updating what exists, under a short name per backup", () => {
    const r = restoreManifest(cluster(BACKUP), names);
    expect(r?.metadata).toMatchObject({
      namespace: "velero",
      labels: { "api.openshift.com/id": UID },
    });
    expect(r?.metadata.name).toBe(restoreName(names, BACKUP));
    expect(r?.metadata.name?.length).toBeLessThanOrEqual(63);
    expect(r?.metadata.name).toMatch(new RegExp(`^${UID}-restore-[0-9a-f]{10}$`));
    expect(restoreName(names, `${UID}-backup-20260527040000`)).not.toBe(r?.metadata.name);
    expect(r?.spec).toEqual({
      backupName: BACKUP,
      includedNamespaces: [names.hostedClusterNamespace, names.controlPlaneNamespace],
      existingResourcePolicy: "update",
      restorePVs: true,
    });
    const [config] = restoreFeedbackConfig(cluster(BACKUP), names);
    expect(config?.resourceIdentifier).toEqual({
      group: "velero.io",
      resource: "restores",
      name: r?.metadata.name,
      namespace: "velero",
    });
  });

  it("pauses the HostedCluster in the work while the restore has not ended, and resumes it after", async () => {
    const region = sampleRegion();
    const release: Release = { version: "4.19.7", image: "quay.io/x:4.19.7", channelGroups: ["stable"] };
    const signingKey = await newSigningKey();
    const build = (c: HcpCluster) =>
      hostedClusterWork({
        cluster: c,
        names,
        release,
        region,
        consumer: "mgmt-1",
        oidc: { issuerURL: "https://issuer.example/x", signingKey },
        externalAuths: [],
      });
    const hostedOf = (c: HcpCluster) =>
      build(c).spec?.workload?.manifests?.find((m) => m.kind === "HostedCluster") as
        { spec: { pausedUntil?: string } } | undefined;
    const kinds = (c: HcpCluster) => build(c).spec?.workload?.manifests?.map((m) => m.kind);
    expect(hostedOf(cluster())?.spec.pausedUntil).toBeUndefined();
    expect(kinds(cluster())).not.toContain("Restore");
    const asked = cluster(BACKUP);
    expect(hostedOf(asked)?.spec.pausedUntil).toBe("true");
    expect(kinds(asked)).toContain("Restore");
    const running = cluster(BACKUP, { backupName: BACKUP, restoreName: "r", phase: "InProgress" });
    expect(hostedOf(running)?.spec.pausedUntil).toBe("true");
    for (const phase of ["Completed", "PartiallyFailed", "Failed", "FailedValidation"] as const) {
      const ended = cluster(BACKUP, { backupName: BACKUP, restoreName: "r", phase });
      expect(hostedOf(ended)?.spec.pausedUntil).toBeUndefined();
      expect(kinds(ended)).toContain("Restore");
    }
    // Another backup asked after one ended: paused again.
    const another = cluster(`${UID}-backup-20260527040000`, {
      backupName: BACKUP,
      restoreName: "r",
      phase: "Completed",
    });
    expect(hostedOf(another)?.spec.pausedUntil).toBe("true");
  });

  it("changes the work's inputs when a restore ends, and only for a cluster with a restore", () => {
    const base: WorkInputs = {
      generation: 3,
      release: { version: "4.19.1", image: "i" },
      consumer: "mgmt-1",
      signingKeyId: "k",
      externalAuths: "",
      etcdKeys: "",
    };
    expect(inputsDigest({ ...base, restore: "" })).toBe(inputsDigest(base));
    const underway = restoreInput(cluster(BACKUP));
    const ended = restoreInput(cluster(BACKUP, { backupName: BACKUP, restoreName: "r", phase: "Completed" }));
    expect(underway).not.toBe(ended);
    expect(inputsDigest({ ...base, restore: underway })).not.toBe(inputsDigest({ ...base, restore: ended }));
  });
});

describe("a backup not of this cluster, asked when the CRD could not tell (at create)", () => {
  it("makes no Restore, pauses nothing, and says why naming spec.restore.backupName", () => {
    const foreign = "11111111-2222-4333-8444-555566667777-backup-20260527030000";
    const c = cluster(foreign);
    expect(restoreManifest(c, names)).toBeUndefined();
    expect(restoreFeedbackConfig(c, names)).toEqual([]);
    expect(restoreUnderway(c, names)).toBe(false);
    const status = restoreStatus(c, names, {});
    expect(status).toMatchObject({ backupName: foreign, phase: "FailedValidation" });
    expect(status?.failureReason).toContain("spec.restore.backupName");
    expect(status?.failureReason).toContain(`${UID}-backup-`);
  });
});

describe("status.restore from the Restore's feedback", () => {
  const F = RESTORE_FEEDBACK;

  it("is New until Velero reports the asked backup's Restore", () => {
    const c = cluster(BACKUP);
    expect(restoreStatus(c, names, {})).toEqual({
      backupName: BACKUP,
      restoreName: restoreName(names, BACKUP),
      phase: "New",
    });
    // A report of another backup's Restore is not this one's.
    expect(restoreStatus(c, names, { backupName: "other", phase: "Completed" })?.phase).toBe("New");
    expect(restoreStatus(cluster(), names, { backupName: BACKUP, phase: "Completed" })).toBeUndefined();
  });

  it("maps Velero's phases, progress and counts, and keeps the last report while none comes", () => {
    const c = cluster(BACKUP);
    const running = observedRestore(
      c,
      names,
      workWith({
        [F.backupName]: BACKUP,
        [F.phase]: "WaitingForPluginOperations",
        [F.itemsTotal]: 7,
        [F.itemsRestored]: 3,
        [F.started]: "2026-05-27T03:10:00Z",
      }),
    ).status;
    expect(running).toMatchObject({
      phase: "InProgress",
      itemsRestored: 3,
      itemsTotal: 7,
      startedAt: "2026-05-27T03:10:00Z",
    });
    const done = restoreStatus(
      c,
      names,
      restoreReport({
        [F.backupName]: BACKUP,
        [F.phase]: "Completed",
        [F.itemsTotal]: 7,
        [F.itemsRestored]: 7,
        [F.warnings]: 1,
        [F.errors]: 0,
        [F.completed]: "2026-05-27T03:11:00Z",
      }),
    );
    expect(done).toMatchObject({
      phase: "Completed",
      itemsRestored: 7,
      warnings: 1,
      errors: 0,
      completedAt: "2026-05-27T03:11:00Z",
    });
    // The feedback missing for a moment: the status keeps what it said of the same Restore.
    const kept = cluster(BACKUP, done);
    expect(restoreStatus(kept, names, {})).toEqual(done);
  });

  it("gives the reason a restore failed: Velero's failureReason, else its first validation error", () => {
    const c = cluster(BACKUP);
    const refused = restoreReport({
      [F.backupName]: BACKUP,
      [F.phase]: "FailedValidation",
      [F.validationError]: `Error retrieving backup: backups.velero.io "${BACKUP}" not found`,
    });
    expect(restoreStatus(c, names, refused)).toMatchObject({
      phase: "FailedValidation",
      failureReason: `Error retrieving backup: backups.velero.io "${BACKUP}" not found`,
    });
    const failed = restoreReport({ [F.backupName]: BACKUP, [F.phase]: "Failed", [F.failureReason]: "boom" });
    expect(restoreStatus(c, names, failed)?.failureReason).toBe("boom");
    expect(restoreReport({ [F.phase]: "Exploded", [F.itemsRestored]: -1 })).toEqual({});
  });
});

describe("restore events", () => {
  const s = (phase: HcpClusterRestoreStatus["phase"], extra: Partial<HcpClusterRestoreStatus> = {}) => ({
    backupName: BACKUP,
    restoreName: "r1",
    phase,
    ...extra,
  });
  const reasons = (b: HcpClusterRestoreStatus | undefined, a: HcpClusterRestoreStatus | undefined) =>
    restoreEvents(b, a).map((e) => e.reason);

  it("tells the start and the end once each", () => {
    expect(reasons(undefined, s("New"))).toEqual([]);
    expect(reasons(s("New"), s("InProgress"))).toEqual(["RestoreStarted"]);
    expect(reasons(s("InProgress"), s("InProgress", { itemsRestored: 3 }))).toEqual([]);
    const [completed] = restoreEvents(s("InProgress"), s("Completed", { itemsRestored: 7 }));
    expect(completed).toMatchObject({ type: "Normal", reason: "RestoreCompleted" });
    expect(completed?.message).toContain("7 objects restored");
    expect(reasons(s("Completed"), s("Completed"))).toEqual([]);
    // A start no report showed (it ended between two): it did start, told first.
    expect(reasons(s("New"), s("Completed"))).toEqual(["RestoreStarted", "RestoreCompleted"]);
    expect(reasons(undefined, s("Failed"))).toEqual(["RestoreStarted", "RestoreFailed"]);
    // Another Restore (another backup) starts over.
    expect(reasons(s("Completed"), { ...s("InProgress"), restoreName: "r2" })).toEqual(["RestoreStarted"]);
    expect(reasons(s("InProgress"), undefined)).toEqual([]);
  });

  it("words each failure as it is, a Warning; a refused restore never started", () => {
    const refused = restoreEvents(s("New"), s("FailedValidation", { failureReason: "backup not found" }));
    expect(refused.map((e) => e.reason)).toEqual(["RestoreFailed"]);
    expect(refused[0]).toMatchObject({ type: "Warning" });
    expect(refused[0]?.message).toContain("Velero refused the restore");
    expect(refused[0]?.message).toContain("nothing was restored");
    const [partial] = restoreEvents(s("InProgress"), s("PartiallyFailed", { itemsRestored: 5, errors: 2 }));
    expect(partial?.message).toContain("partially failed");
    expect(partial?.message).toContain("2 errors");
    expect(restoreEvents(s("InProgress"), s("Failed", { failureReason: "boom" }))[0]?.message).toContain(
      ": boom",
    );
  });
});

describe("the recent backups the Schedule's reporter lists", () => {
  it("are names, newest first, at most ten, malformed ones dropped", () => {
    const names12 = Array.from(
      { length: 12 },
      (_, i) => `${UID}-backup-2026052703${String(59 - i).padStart(4, "0")}`,
    );
    const report = backupReport({ [BACKUP_FEEDBACK.recent]: [...names12, "Bad Name"].join(",") });
    expect(report.recent).toEqual(names12.slice(0, 10));
    expect(backupReport({ [BACKUP_FEEDBACK.recent]: "" }).recent).toBeUndefined();
  });
});
