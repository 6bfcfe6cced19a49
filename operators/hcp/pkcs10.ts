/**
 * The little X.509 the break-glass path needs, on node:crypto alone: a DER writer and reader, a
 * PKCS#10 certificate request made from a key (when the service makes the key) and one read and
 * checked (when a client sends its own). Node can parse certificates (X509Certificate) but neither
 * makes nor reads certificate requests. Only what HyperShift's break-glass signer accepts is
 * supported: EC P-256 or RSA keys, SHA-256 signatures, a subject of CN and O.
 */
import { createPublicKey, sign, verify, type KeyObject } from "node:crypto";

const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  ecdsaWithSHA256: "1.2.840.10045.4.3.2",
  sha256WithRSA: "1.2.840.113549.1.1.11",
  extensionRequest: "1.2.840.113549.1.9.14",
  subjectAltName: "2.5.29.17",
} as const;

export const DER = {
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8: 0x0c,
  PRINTABLE: 0x13,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One DER tag-length-value. */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(DER.SEQUENCE, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(DER.SET, Buffer.concat(items));
export const utf8 = (s: string): Buffer => tlv(DER.UTF8, Buffer.from(s, "utf8"));
export const bitString = (b: Buffer): Buffer => tlv(DER.BIT_STRING, Buffer.concat([Buffer.from([0]), b]));
/** `[n]` constructed, context-specific (EXPLICIT tagging, or an IMPLICIT SET/SEQUENCE). */
export const context = (n: number, content: Buffer): Buffer => tlv(0xa0 | n, content);

/** A non-negative INTEGER from its big-endian magnitude. */
export function integer(magnitude: Buffer | number): Buffer {
  let b = typeof magnitude === "number" ? Buffer.from([magnitude]) : magnitude;
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  b = b.subarray(i);
  if ((b[0] ?? 0) & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(DER.INTEGER, b);
}

export function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [a * 40 + b];
  for (const n of rest) {
    const chunk: number[] = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(DER.OID, Buffer.from(bytes));
}

/** A node of a DER tree: its tag, its content, and the whole encoding. */
export interface DerNode {
  tag: number;
  content: Buffer;
  raw: Buffer;
}

/** The TLV at `offset` of `buf`; throws on anything truncated or longer than its container. */
export function readTlv(buf: Buffer, offset = 0): DerNode {
  const tag = buf[offset];
  let len = buf[offset + 1];
  if (tag === undefined || len === undefined) throw new Error("truncated DER");
  let header = 2;
  if (len & 0x80) {
    const count = len & 0x7f;
    if (count === 0 || count > 4) throw new Error("unsupported DER length");
    len = 0;
    for (let i = 0; i < count; i++) len = len * 256 + (buf[offset + 2 + i] ?? 0);
    header += count;
  }
  const end = offset + header + len;
  if (end > buf.length) throw new Error("truncated DER");
  return { tag, content: buf.subarray(offset + header, end), raw: buf.subarray(offset, end) };
}

/** The children of a constructed node. */
export function children(node: DerNode): DerNode[] {
  const out: DerNode[] = [];
  for (let at = 0; at < node.content.length;) {
    const child = readTlv(node.content, at);
    out.push(child);
    at += child.raw.length;
  }
  return out;
}

export function readOid(node: DerNode): string {
  if (node.tag !== DER.OID) throw new Error("expected an OBJECT IDENTIFIER");
  const [first = 0, ...rest] = node.content;
  const parts = [Math.floor(first / 40), first % 40];
  let value = 0;
  for (const byte of rest) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join(".");
}

export interface Subject {
  commonName: string;
  organizations?: string[];
}

/** An X.509 Name of CN and O attributes. */
export function encodeName(subject: Subject): Buffer {
  const rdn = (type: string, value: string) => set(seq(oid(type), utf8(value)));
  return seq(
    ...(subject.organizations ?? []).map((o) => rdn(OID.organization, o)),
    rdn(OID.commonName, subject.commonName),
  );
}

export function decodeName(node: DerNode): Subject {
  const organizations: string[] = [];
  let commonName = "";
  for (const rdn of children(node))
    for (const attr of children(rdn)) {
      const [type, value] = children(attr);
      if (!type || !value) continue;
      const text = value.content.toString("utf8");
      const id = readOid(type);
      if (id === OID.commonName) commonName = text;
      if (id === OID.organization) organizations.push(text);
    }
  return { commonName, ...(organizations.length > 0 ? { organizations } : {}) };
}

/** The signature algorithm of a key: ECDSA or RSA, always with SHA-256. */
export function signatureAlgorithm(key: KeyObject): Buffer {
  return key.asymmetricKeyType === "ec"
    ? seq(oid(OID.ecdsaWithSHA256))
    : seq(oid(OID.sha256WithRSA), tlv(DER.NULL, Buffer.alloc(0)));
}

export function signWith(key: KeyObject, data: Buffer): Buffer {
  return sign("sha256", data, key.asymmetricKeyType === "ec" ? { key, dsaEncoding: "der" } : key);
}

export function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** The DER inside the first PEM block of `label`; undefined when there is none. */
export function fromPem(text: string, label: string): Buffer | undefined {
  const m = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`).exec(text);
  if (!m?.[1]) return undefined;
  const body = m[1].replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return undefined;
  return Buffer.from(body, "base64");
}

/** A PKCS#10 request for `subject`, signed by `key`, as PEM. */
export function certificateRequest(key: KeyObject, subject: Subject): string {
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  const info = seq(integer(0), encodeName(subject), spki, context(0, Buffer.alloc(0)));
  return pem("CERTIFICATE REQUEST", seq(info, signatureAlgorithm(key), bitString(signWith(key, info))));
}

/** What a certificate request asks for, read and its self-signature checked. */
export interface ParsedRequest {
  subject: Subject;
  publicKey: KeyObject;
  /** The SubjectPublicKeyInfo as it was sent. */
  spki: Buffer;
  /** DNS names in a subjectAltName extension request (HyperShift refuses them). */
  dnsNames: string[];
}

/** The DNS names (GeneralName [2]) of a subjectAltName extension's value. */
function sanDnsNames(ext: DerNode): string[] {
  const [id, ...rest] = children(ext);
  const value = rest[rest.length - 1];
  if (!id || !value || readOid(id) !== OID.subjectAltName) return [];
  return children(readTlv(value.content))
    .filter((general) => general.tag === 0x82)
    .map((general) => general.content.toString("ascii"));
}

/** The DNS names of an extensionRequest attribute's subjectAltName, if any. */
function requestedDnsNames(attributes: DerNode | undefined): string[] {
  const requests = (attributes ? children(attributes) : [])
    .map((attr) => children(attr))
    .filter(([type, values]) => type && values && readOid(type) === OID.extensionRequest);
  return requests.flatMap(([, values]) =>
    (values ? children(values) : []).flatMap((exts) => children(exts).flatMap(sanDnsNames)),
  );
}

/** Checks that a request was signed by the key it carries (SHA-256 with ECDSA or RSA). */
function checkSignature(algorithm: DerNode, info: DerNode, signature: DerNode, publicKey: KeyObject): void {
  const [algo] = children(algorithm);
  const id = algo ? readOid(algo) : "";
  if (id !== OID.ecdsaWithSHA256 && id !== OID.sha256WithRSA)
    throw new Error(`unsupported signature algorithm ${id} (want SHA-256 with ECDSA or RSA)`);
  const key =
    publicKey.asymmetricKeyType === "ec" ? { key: publicKey, dsaEncoding: "der" as const } : publicKey;
  if (!verify("sha256", info.raw, key, signature.content.subarray(1)))
    throw new Error("the request's signature does not verify");
}

function readRequest(der: Buffer): ParsedRequest {
  const [info, algorithm, signature] = children(readTlv(der));
  if (!info || !algorithm || signature?.tag !== DER.BIT_STRING)
    throw new Error("not a PKCS#10 certificate request");
  const [version, name, spkiNode, attributes] = children(info);
  if (!version || !name || !spkiNode) throw new Error("not a PKCS#10 certificate request");
  const publicKey = createPublicKey({ key: spkiNode.raw, format: "der", type: "spki" });
  checkSignature(algorithm, info, signature, publicKey);
  return {
    subject: decodeName(name),
    publicKey,
    spki: spkiNode.raw,
    dnsNames: requestedDnsNames(attributes),
  };
}

/**
 * Reads a PEM certificate request and checks its signature. Throws an Error saying what is wrong
 * (not PEM, not DER, not a request, a bad signature).
 */
export function parseCertificateRequest(text: string): ParsedRequest {
  const der = fromPem(text, "CERTIFICATE REQUEST");
  if (!der) throw new Error("not a PEM block of type CERTIFICATE REQUEST");
  try {
    return readRequest(der);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`malformed certificate request: ${message}`, { cause: err });
  }
}

/**
 * What HyperShift's break-glass signer refuses in a request for `signerClass`, checked before the
 * request travels: undefined when it would be signed, else why not.
 */
export function breakGlassRequestProblem(text: string, signerClass: string): string | undefined {
  let parsed: ParsedRequest;
  try {
    parsed = parseCertificateRequest(text);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const prefix = `system:${signerClass}:`;
  if (!parsed.subject.commonName.startsWith(prefix) || parsed.subject.commonName === prefix)
    return `the subject CommonName "${parsed.subject.commonName}" must begin with "${prefix}" and name the user after it`;
  if (parsed.dnsNames.length > 0)
    return "DNS subjectAltNames are not allowed in a client certificate request";
  return undefined;
}
