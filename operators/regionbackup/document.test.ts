import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HcpClusterResource } from "../api/v1alpha1/index.ts";
import {
  backupKey,
  DocumentSealer,
  FORMAT_VERSION,
  openDocument,
  readBackupKey,
  sealDocument,
  type BackupDocument,
} from "./document.ts";
import { stripServerSet } from "./selection.ts";

const cluster = {
  apiVersion: "hcp.aro.dev/v1alpha1",
  kind: "HcpCluster",
  metadata: {
    name: "demo",
    namespace: "sub-1",
    uid: "u-1",
    resourceVersion: "42",
    generation: 3,
    creationTimestamp: "2026-01-01T00:00:00Z",
    selfLink: "/apis/x",
    managedFields: [{ manager: "m" }],
    labels: { a: "b" },
    annotations: { "hcp.aro.dev/cluster-id": "u-1" },
    finalizers: ["hcp.aro.dev/cleanup"],
    ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "o-1" }],
  },
  spec: { version: { id: "4.20" } },
  status: { managementCluster: "mgmt-1" },
};

function doc(): BackupDocument {
  return {
    formatVersion: FORMAT_VERSION,
    region: "local",
    takenAt: "2026-11-28T08:00:00.000Z",
    listDurationMs: 12,
    resourceVersions: { "hcp.aro.dev/HcpCluster": ["42"] },
    objects: [
      { type: "hcp.aro.dev/HcpCluster", uid: "u-1", object: stripServerSet(cluster, HcpClusterResource) },
    ],
  };
}

describe("region backup document", () => {
  const key = backupKey(randomBytes(32));

  it("round-trips through seal and open", () => {
    const sealed = sealDocument(doc(), key);
    expect(sealed).not.toContain("mgmt-1");
    expect(openDocument(sealed, key)).toEqual(doc());
  });

  it("seals the same document streamed object by object", async () => {
    const whole = doc();
    const sealer = new DocumentSealer(key, {
      formatVersion: whole.formatVersion,
      region: whole.region,
      takenAt: whole.takenAt,
    });
    for (const o of whole.objects) await sealer.add(o);
    const body = await sealer.finish({ listDurationMs: 12, resourceVersions: whole.resourceVersions });
    expect(openDocument(body, key)).toEqual(whole);
    expect(sealer.count).toBe(1);
  });

  it("strips server-set fields and keeps status, labels, annotations, finalizers and owners", () => {
    const meta = stripServerSet(cluster, HcpClusterResource).metadata;
    expect(Object.keys(meta).sort()).toEqual(
      ["annotations", "finalizers", "labels", "name", "namespace", "ownerReferences"].sort(),
    );
    expect(stripServerSet(cluster, HcpClusterResource)["status"]).toEqual({ managementCluster: "mgmt-1" });
  });

  it("refuses a wrong key, naming both key IDs", () => {
    const other = backupKey(randomBytes(32));
    expect(() => openDocument(sealDocument(doc(), key), other)).toThrow(
      `the backup was encrypted with key ${key.id}; the key given is ${other.id}`,
    );
  });

  it("refuses a changed byte of the data, the IV or the tag", () => {
    for (const field of ["data", "iv", "tag"] as const) {
      const envelope = JSON.parse(sealDocument(doc(), key)) as Record<string, string>;
      const bytes = Buffer.from(envelope[field]!, "base64");
      bytes[bytes.length >> 1]! ^= 0x01;
      envelope[field] = bytes.toString("base64");
      expect(() => openDocument(JSON.stringify(envelope), key), field).toThrow(
        /fails its authentication tag/,
      );
    }
  });

  it("refuses a body that is not an envelope, and a document of another version", () => {
    expect(() => openDocument("{nope", key, "backups/x")).toThrow("backups/x is not a region backup");
    const future = { ...doc(), formatVersion: 2 };
    expect(() => openDocument(sealDocument(future, key), key)).toThrow(/formatVersion 2 is not 1/);
  });

  it("reads a key file raw or base64 and names the flag for any other size", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rb-key-"));
    const raw = randomBytes(32);
    await writeFile(join(dir, "raw"), raw);
    await writeFile(join(dir, "b64"), `${raw.toString("base64")}\n`);
    await writeFile(join(dir, "short"), "c2hvcnQ=");
    expect((await readBackupKey(join(dir, "raw"), "--key")).id).toBe(backupKey(raw).id);
    expect((await readBackupKey(join(dir, "b64"), "--key")).id).toBe(backupKey(raw).id);
    await expect(readBackupKey(join(dir, "short"), "--region-backup-key")).rejects.toThrow(
      /^--region-backup-key .*short: must hold a 32-byte key, raw or base64/,
    );
    await expect(readBackupKey(join(dir, "none"), "--key")).rejects.toThrow(/^--key .*none: ENOENT/);
  });
});
