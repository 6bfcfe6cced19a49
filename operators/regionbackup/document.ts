/**
 * A region backup as it is stored: one JSON document of the region's objects, gzipped, then sealed
 * with AES-256-GCM (a random 96-bit IV per backup, the 128-bit tag, and the key's ID and the format
 * as associated data, so that neither can be swapped unnoticed). The blob body is a small JSON
 * envelope of base64 fields, because the blob store carries text. A wrong key is named by its ID;
 * any changed byte fails the tag and nothing of the document is read.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, type CipherGCM } from "node:crypto";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { finished } from "node:stream/promises";
import { createGzip, gunzipSync, gzipSync, type Gzip } from "node:zlib";
import type { KubeObject } from "../api/meta/v1.ts";

export const FORMAT_VERSION = 1;
const ENVELOPE_FORMAT = "hcp-region-backup/aes-256-gcm/v1";
const KEY_BYTES = 32;
const IV_BYTES = 12;

/** One held object: stored without server-set fields; `uid` is the one it had, for the owners' mapping. */
export interface BackedUpObject {
  /** `group/kind` (selection.ts typeKey). */
  type: string;
  uid: string;
  object: KubeObject;
  /**
   * Its deletionTimestamp when it was being deleted (its finalizer holding it): the restore deletes
   * it again, so a deletion under way when the region was lost is finished, not forgotten.
   */
  deleting?: string;
}

export interface BackupDocument {
  formatVersion: number;
  /** The region's name (its environment). */
  region: string;
  /** RFC 3339 with milliseconds: when the first list was made. */
  takenAt: string;
  /** How long listing everything took, in ms. */
  listDurationMs: number;
  /** The backup's interval, when it was taken by the operators (not by hand). */
  intervalSeconds?: number;
  /** The list's resourceVersion per `group/kind` (per list: a kind may be listed more than once). */
  resourceVersions: Record<string, string[]>;
  objects: BackedUpObject[];
}

/** A 256-bit key and its ID (the first 16 hex digits of its SHA-256: names it, reveals nothing). */
export interface BackupKey {
  id: string;
  bytes: Buffer;
}

export class BackupFormatError extends Error {
  override readonly name = "BackupFormatError";
}

export function backupKey(bytes: Buffer): BackupKey {
  if (bytes.length !== KEY_BYTES)
    throw new BackupFormatError(`the key must be ${KEY_BYTES} bytes, got ${bytes.length}`);
  return { id: createHash("sha256").update(bytes).digest("hex").slice(0, 16), bytes };
}

/** Reads a key file of 32 raw bytes or their base64; the error names `flag`. */
export async function readBackupKey(path: string, flag: string): Promise<BackupKey> {
  let raw: Buffer;
  try {
    raw = await readFile(path);
  } catch (err) {
    throw new BackupFormatError(`${flag} ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (raw.length === KEY_BYTES) return backupKey(raw);
  const text = raw.toString("utf8").trim();
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, "base64") : Buffer.alloc(0);
  if (decoded.length !== KEY_BYTES)
    throw new BackupFormatError(
      `${flag} ${path}: must hold a 32-byte key, raw or base64 (it holds ${raw.length} bytes${decoded.length ? `, ${decoded.length} when base64-decoded` : ""})`,
    );
  return backupKey(decoded);
}

interface Envelope {
  format: string;
  keyId: string;
  iv: string;
  tag: string;
  data: string;
}

const associatedData = (keyId: string): Buffer => Buffer.from(`${ENVELOPE_FORMAT}\n${keyId}`, "utf8");

function newCipher(key: BackupKey): { iv: Buffer; cipher: CipherGCM } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key.bytes, iv);
  cipher.setAAD(associatedData(key.id));
  return { iv, cipher };
}

function envelopeOf(key: BackupKey, iv: Buffer, cipher: CipherGCM, data: Buffer): string {
  const head: Omit<Envelope, "data"> = {
    format: ENVELOPE_FORMAT,
    keyId: key.id,
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
  };
  // Not JSON.stringify of the whole: the data is the bulk, and one copy of it is enough.
  return `${JSON.stringify(head).slice(0, -1)},"data":"${data.toString("base64")}"}`;
}

/** The blob body of a document held whole (tests, small regions); DocumentSealer streams one. */
export function sealDocument(doc: BackupDocument, key: BackupKey): string {
  const { iv, cipher } = newCipher(key);
  const data = Buffer.concat([cipher.update(gzipSync(JSON.stringify(doc))), cipher.final()]);
  return envelopeOf(key, iv, cipher, data);
}

/**
 * Seals a document object by object, so that a backup of 10,000 clusters never holds the whole
 * document as objects or as one JSON string: each object goes through gzip and the cipher as it
 * is added, and only the compressed ciphertext is kept (off the JS heap) until `finish`.
 */
export class DocumentSealer {
  readonly #key: BackupKey;
  readonly #iv: Buffer;
  readonly #cipher: CipherGCM;
  readonly #gzip: Gzip = createGzip();
  readonly #sealed: Buffer[] = [];
  #count = 0;

  constructor(
    key: BackupKey,
    head: Pick<BackupDocument, "formatVersion" | "region" | "takenAt" | "intervalSeconds">,
  ) {
    this.#key = key;
    ({ iv: this.#iv, cipher: this.#cipher } = newCipher(key));
    this.#gzip.on("data", (chunk: Buffer) => this.#sealed.push(this.#cipher.update(chunk)));
    this.#gzip.write(`${JSON.stringify(head).slice(0, -1)},"objects":[`);
  }

  get count(): number {
    return this.#count;
  }

  async add(o: BackedUpObject): Promise<void> {
    const more = this.#gzip.write(`${this.#count++ === 0 ? "" : ","}${JSON.stringify(o)}`);
    if (!more) await once(this.#gzip, "drain");
  }

  /** The blob body, with the fields known only at the end. */
  async finish(tail: Pick<BackupDocument, "listDurationMs" | "resourceVersions">): Promise<string> {
    this.#gzip.end(`],${JSON.stringify(tail).slice(1)}`);
    await finished(this.#gzip);
    this.#sealed.push(this.#cipher.final());
    return envelopeOf(this.#key, this.#iv, this.#cipher, Buffer.concat(this.#sealed));
  }
}

function parseEnvelope(body: string, where: string): Envelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new BackupFormatError(`${where} is not a region backup (not a JSON envelope)`);
  }
  const e = parsed as Partial<Envelope>;
  if (e.format !== ENVELOPE_FORMAT)
    throw new BackupFormatError(
      `${where}: format is ${JSON.stringify(e.format)}, expected ${ENVELOPE_FORMAT}`,
    );
  for (const field of ["keyId", "iv", "tag", "data"] as const)
    if (typeof e[field] !== "string")
      throw new BackupFormatError(`${where}: envelope field ${field} is missing`);
  return e as Envelope;
}

/** The document of a blob body; refuses a wrong key, a changed byte or a document of another format. */
export function openDocument(body: string, key: BackupKey, where = "the backup"): BackupDocument {
  const e = parseEnvelope(body, where);
  if (e.keyId !== key.id)
    throw new BackupFormatError(`${where} was encrypted with key ${e.keyId}; the key given is ${key.id}`);
  let plain: Buffer;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.bytes, Buffer.from(e.iv, "base64"));
    decipher.setAAD(associatedData(e.keyId));
    decipher.setAuthTag(Buffer.from(e.tag, "base64"));
    plain = Buffer.concat([decipher.update(Buffer.from(e.data, "base64")), decipher.final()]);
  } catch {
    throw new BackupFormatError(
      `${where} fails its authentication tag: it was altered or damaged after it was written (nothing of it is used)`,
    );
  }
  return checkDocument(JSON.parse(gunzipSync(plain).toString("utf8")) as unknown, where);
}

function checkDocument(value: unknown, where: string): BackupDocument {
  const doc = value as Partial<BackupDocument>;
  if (doc.formatVersion !== FORMAT_VERSION)
    throw new BackupFormatError(
      `${where}: formatVersion ${String(doc.formatVersion)} is not ${FORMAT_VERSION}, the one this version reads`,
    );
  if (typeof doc.takenAt !== "string" || Number.isNaN(Date.parse(doc.takenAt)))
    throw new BackupFormatError(`${where}: takenAt is missing or not a time`);
  if (!Array.isArray(doc.objects)) throw new BackupFormatError(`${where}: objects is not a list`);
  doc.objects.forEach((o, i) => {
    if (typeof o?.type !== "string" || typeof o.object?.metadata?.name !== "string")
      throw new BackupFormatError(`${where}: objects[${i}] has no type or metadata.name`);
  });
  return doc as BackupDocument;
}
