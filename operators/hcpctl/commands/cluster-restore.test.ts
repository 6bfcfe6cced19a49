import { describe, expect, it } from "vitest";
import { describeRestore } from "./cluster-restore.ts";

describe("a restore's progress line", () => {
  it("says the phase, the objects restored of all, and what went wrong", () => {
    const base = { backupName: "b-backup-20260527030000", restoreName: "r" };
    expect(describeRestore({ ...base, phase: "New" })).toBe("restore from b-backup-20260527030000: New");
    expect(describeRestore({ ...base, phase: "InProgress", itemsRestored: 0, itemsTotal: 9 })).toBe(
      "restore from b-backup-20260527030000: InProgress 0/9 objects",
    );
    expect(
      describeRestore({
        ...base,
        phase: "PartiallyFailed",
        itemsRestored: 7,
        itemsTotal: 9,
        errors: 2,
        warnings: 1,
      }),
    ).toBe("restore from b-backup-20260527030000: PartiallyFailed 7/9 objects (1 warnings, 2 errors)");
    expect(
      describeRestore({
        ...base,
        phase: "FailedValidation",
        failureReason: 'backups.velero.io "x" not found',
      }),
    ).toBe('restore from b-backup-20260527030000: FailedValidation: backups.velero.io "x" not found');
  });
});
