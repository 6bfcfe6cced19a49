import { describe, expect, it } from "vitest";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import { sampleCluster, sampleRegion } from "../../test/support/samples.ts";
import {
  BACKUP_FEEDBACK,
  backupFeedbackConfig,
  backupReport,
  backupScheduleManifest,
  backupVerdict,
  type BackupReport,
} from "./backup.ts";
import { cronError, nextFire, parseCron, periodAfter } from "./backup-cron.ts";

const HOUR = 3_600_000;

function cluster(backup?: HcpCluster["spec"]["backup"]): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "c", namespace: "ns", uid: "0b6c1b6e-1111-4222-8333-444455556666" };
  if (backup) c.spec.backup = backup;
  return c;
}

const at = (iso: string) => Date.parse(iso);

describe("cron as Velero reads it", () => {
  it("fires at the next matching minute, in UTC", () => {
    const hourly = parseCron("0 */1 * * *");
    expect(nextFire(hourly, new Date("2026-05-27T02:00:15Z"))?.toISOString()).toBe(
      "2026-05-27T03:00:00.000Z",
    );
    const weekly = parseCron("0 3 * * 0");
    expect(nextFire(weekly, new Date("2026-05-27T02:00:00Z"))?.toISOString()).toBe(
      "2026-05-31T03:00:00.000Z",
    );
    expect(periodAfter(weekly, new Date("2026-05-27T00:00:00Z"))).toBe(7 * 24 * HOUR);
    expect(periodAfter(parseCron("*/10 * * * *"), new Date("2026-05-27T00:00:00Z"))).toBe(600_000);
  });

  it("takes either day when both day fields are restricted, and 7 as Sunday", () => {
    const c = parseCron("0 0 1 * 7");
    // 2026-05-27 is a Wednesday: the next Sunday (05-31) comes before the 1st (06-01).
    expect(nextFire(c, new Date("2026-05-27T00:00:00Z"))?.toISOString()).toBe("2026-05-31T00:00:00.000Z");
  });

  it("says which field is wrong", () => {
    expect(cronError("0 */1 * * *")).toBeUndefined();
    expect(cronError("every hour")).toContain("fields");
    expect(cronError("0 24 * * *")).toContain("hour");
    expect(cronError("30-10 * * * *")).toContain("begins after it ends");
    expect(nextFire(parseCron("0 0 31 2 *"), new Date("2026-01-01T00:00:00Z"))).toBeUndefined();
  });
});

describe("the cluster's Schedule", () => {
  it("covers the two namespaces, with ARO HCP's hourly tier by default", () => {
    const names = clusterNames(cluster(), sampleRegion());
    const s = backupScheduleManifest(cluster(), names);
    expect(s.metadata).toMatchObject({ name: `${names.clusterID}-backup`, namespace: "velero" });
    expect(s.metadata.name?.length).toBeLessThanOrEqual(63);
    expect(s.spec).toEqual({
      schedule: "0 */1 * * *",
      paused: false,
      template: {
        includedNamespaces: [names.hostedClusterNamespace, names.controlPlaneNamespace],
        ttl: "168h0m0s",
        snapshotVolumes: true,
      },
    });
    const custom = backupScheduleManifest(
      cluster({ paused: true, schedule: "0 2 * * *", retentionHours: 720 }),
      names,
    );
    expect(custom.spec).toMatchObject({ schedule: "0 2 * * *", paused: true, template: { ttl: "720h0m0s" } });
    expect(backupFeedbackConfig(names).resourceIdentifier).toEqual({
      group: "velero.io",
      resource: "schedules",
      name: `${names.clusterID}-backup`,
      namespace: "velero",
    });
  });
});

describe("BackupsHealthy", () => {
  const now = at("2026-05-27T02:30:00Z");
  const enabled: BackupReport = {
    phase: "Enabled",
    paused: false,
    created: "2026-05-20T00:00:00Z",
    lastBackup: "2026-05-27T02:00:00Z",
    lastPhase: "Completed",
    lastCompleted: "2026-05-27T02:00:05Z",
  };
  const verdict = (r: BackupReport, c = cluster(), t = now) => backupVerdict(c, r, t);

  it("is Unknown until Velero reports the Schedule", () => {
    expect(verdict({}).condition).toMatchObject({ status: "Unknown", reason: "AwaitingReport" });
    expect(verdict({}).status).toEqual({ paused: false });
  });

  it("is True while a backup completed within twice the period, and says when it turns overdue", () => {
    const v = verdict(enabled);
    expect(v.condition).toMatchObject({ status: "True", reason: "BackupsCompleting" });
    expect(v.status).toEqual({ phase: "Enabled", lastBackupTime: "2026-05-27T02:00:00Z", paused: false });
    expect(v.overdueAt).toBe(at("2026-05-27T02:00:05Z") + 2 * HOUR);
  });

  it("is False BackupOverdue past twice the period, naming the last completion", () => {
    const v = verdict(enabled, cluster(), at("2026-05-27T04:01:00Z"));
    expect(v.condition).toMatchObject({ status: "False", reason: "BackupOverdue" });
    expect(v.condition.message).toContain("2026-05-27T02:00:05Z");
    expect(v.condition.message).toContain("1h");
    // A daily schedule allows two days.
    expect(
      verdict(enabled, cluster({ schedule: "0 2 * * *" }), at("2026-05-28T04:01:00Z")).condition.status,
    ).toBe("True");
  });

  it("is False when Velero refuses the Schedule, with Velero's reason", () => {
    const v = verdict({ phase: "FailedValidation", validationError: "invalid schedule: bad" });
    expect(v.condition).toMatchObject({ status: "False", reason: "FailedValidation" });
    expect(v.condition.message).toContain("invalid schedule: bad");
    expect(v.status.message).toBe("invalid schedule: bad");
  });

  it("is False when the newest backup failed, with its reason", () => {
    const v = verdict({ ...enabled, lastPhase: "Failed", lastFailure: "storage unreachable" });
    expect(v.condition).toMatchObject({ status: "False", reason: "BackupFailed" });
    expect(v.condition.message).toContain("storage unreachable");
  });

  it("is False Paused when the Schedule is paused, and the status says so", () => {
    const v = verdict({ ...enabled, paused: true });
    expect(v.condition).toMatchObject({ status: "False", reason: "Paused" });
    expect(v.status.paused).toBe(true);
  });

  it("counts a started backup when no reporter annotates outcomes, and the Schedule's age before any", () => {
    const bare: BackupReport = { phase: "Enabled", created: "2026-05-27T02:00:00Z" };
    expect(verdict(bare).condition).toMatchObject({ status: "Unknown", reason: "AwaitingFirstBackup" });
    expect(verdict(bare, cluster(), at("2026-05-27T05:00:00Z")).condition.reason).toBe("BackupOverdue");
    expect(verdict({ ...bare, lastBackup: "2026-05-27T02:00:00Z" }).condition.status).toBe("True");
  });

  it("reads the feedback defensively", () => {
    expect(backupReport({ [BACKUP_FEEDBACK.phase]: "Enabled", [BACKUP_FEEDBACK.paused]: "yes" })).toEqual({
      phase: "Enabled",
    });
    expect(backupReport({ [BACKUP_FEEDBACK.paused]: false, [BACKUP_FEEDBACK.lastBackup]: "" })).toEqual({
      paused: false,
    });
  });
});
