import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../runtime/kube.ts";
import { silentLogger } from "../runtime/logger.ts";
import { RegionBackup } from "./controller.ts";
import { regionBackupFromFlags, type RegionBackupFlags } from "./flags.ts";

// Never called: making the backup from its flags reaches no server.
const client = new KubeClient("service", {
  server: "https://127.0.0.1:1",
  authenticate: () => Promise.reject(new Error("no server in this test")),
});
let keyFile: string;

beforeAll(async () => {
  keyFile = join(await mkdtemp(join(tmpdir(), "rb-flags-")), "key");
  await writeFile(keyFile, randomBytes(32));
});

const flags = (over: Partial<RegionBackupFlags> = {}): RegionBackupFlags => ({
  namespace: "hcp-system",
  environment: "int",
  "region-backup-container-url": "https://hcpbackupint.blob.core.windows.net/region-backups",
  "region-backup-key": keyFile,
  "region-backup-interval": "60",
  "region-backup-retention": "48",
  ...over,
});

describe("region backup flags", () => {
  it("runs no backup without a container URL", async () => {
    expect(
      await regionBackupFromFlags(flags({ "region-backup-container-url": undefined }), client, silentLogger),
    ).toBeUndefined();
  });

  it("makes the backup from good flags", async () => {
    expect(await regionBackupFromFlags(flags(), client, silentLogger)).toBeInstanceOf(RegionBackup);
  });

  it.each([
    [{ "region-backup-container-url": "http://x/c" }, /^--region-backup-container-url must be https/],
    [{ "region-backup-key": undefined }, /^--region-backup-container-url needs --region-backup-key$/],
    [
      { "region-backup-interval": "0" },
      /^--region-backup-interval must be a whole number of seconds from 1 to 86400; got "0"$/,
    ],
    [{ "region-backup-interval": "1m" }, /^--region-backup-interval must be/],
    [
      { "region-backup-retention": "1" },
      /^--region-backup-retention must be a whole number of backups, 2 or more; got "1"$/,
    ],
    [{ "region-backup-key": "/nonexistent/key" }, /^--region-backup-key \/nonexistent\/key: ENOENT/],
  ])("refuses %o naming the flag", async (over, message) => {
    await expect(regionBackupFromFlags(flags(over), client, silentLogger)).rejects.toThrow(message);
  });
});
