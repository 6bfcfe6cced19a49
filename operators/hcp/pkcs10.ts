/**
 * PKCS#10 certificate requests for break-glass credentials, through @peculiar/x509 (on Node's
 * WebCrypto): one made from a key when the service makes the key, one read and checked when a
 * client sends its own (untrusted input). Only what HyperShift's break-glass signer takes and
 * Kubernetes' CSR API reads is accepted: one PEM block, strict DER with nothing after it, SHA-256
 * with ECDSA on P-256 or RSA of at least 2048 bits, a valid self-signature; then a subject of one
 * CommonName under the signer class's prefix and any Organizations, and no subjectAltName.
 */
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API loaded first.
import "reflect-metadata";
import { CertificationRequest } from "@peculiar/asn1-csr";
import { AsnConvert } from "@peculiar/asn1-schema";
import {
  PemConverter,
  Pkcs10CertificateRequest,
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
  type JsonName,
} from "@peculiar/x509";
import { createPublicKey, type KeyObject, type webcrypto } from "node:crypto";

export interface Subject {
  commonName: string;
  organizations?: string[];
}

/** The signature algorithms accepted and used: SHA-256 with ECDSA or RSA (PKCS#1 v1.5). */
const ECDSA_SHA256 = { name: "ECDSA", hash: "SHA-256" } as const;
const RSA_SHA256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;
const OID = {
  ecdsaWithSHA256: "1.2.840.10045.4.3.2",
  sha256WithRSA: "1.2.840.113549.1.1.11",
  extensionRequest: "1.2.840.113549.1.9.14",
  subjectAltName: "2.5.29.17",
} as const;

/** The longest request read: a 16384-bit RSA key's request is under 6 KiB of PEM. */
export const MAX_REQUEST_CHARS = 64 * 1024;
const MIN_RSA_BITS = 2048;
/** Go's crypto/rsa, which verifies the request in Kubernetes and HyperShift, refuses larger keys. */
const MAX_RSA_BITS = 16384;
/** And larger public exponents (which would also make a verification slow). */
const MAX_RSA_EXPONENT = 2n ** 31n - 1n;
/** asn1js limits for a request: far above any real one's, far below what costs time. */
const PARSE_OPTIONS = { berOptions: { maxDepth: 32, maxNodes: 4096, maxContentLength: MAX_REQUEST_CHARS } };

/** A key's signature algorithm (always SHA-256) and its WebCrypto signing and public keys. */
export function webKeys(privateKey: KeyObject): {
  algorithm: typeof ECDSA_SHA256 | typeof RSA_SHA256;
  keys: webcrypto.CryptoKeyPair;
} {
  const ec = privateKey.asymmetricKeyType === "ec";
  if (
    ec ? privateKey.asymmetricKeyDetails?.namedCurve !== "prime256v1" : privateKey.asymmetricKeyType !== "rsa"
  )
    throw new Error("a break-glass key is EC P-256 or RSA");
  const algorithm = ec ? ECDSA_SHA256 : RSA_SHA256;
  const importAs = ec ? { name: "ECDSA", namedCurve: "P-256" } : RSA_SHA256;
  return {
    algorithm,
    keys: {
      privateKey: privateKey.toCryptoKey(importAs, false, ["sign"]),
      publicKey: createPublicKey(privateKey).toCryptoKey(importAs, true, ["verify"]),
    },
  };
}

/** An X.509 Name of the subject: each Organization, then the CommonName, one attribute per RDN. */
export function subjectName(subject: Subject): JsonName {
  return [...(subject.organizations ?? []).map((o) => ({ O: [o] })), { CN: [subject.commonName] }];
}

/** A PKCS#10 request for `subject`, signed by `key` (EC P-256 or RSA), as PEM. */
export async function certificateRequest(key: KeyObject, subject: Subject): Promise<string> {
  const { algorithm, keys } = webKeys(key);
  const request = await Pkcs10CertificateRequestGenerator.create({
    name: subjectName(subject),
    keys,
    signingAlgorithm: algorithm,
  });
  return request.toString("pem");
}

/** The subjectAltNames of a request, by the kinds Go's x509 (and so HyperShift) reads. */
export interface AltNames {
  dns: string[];
  email: string[];
  ip: string[];
  uri: string[];
  /** Any other kind (directory name, registered ID, other name): Go does not read them. */
  other: string[];
}

/** What a certificate request asks for, read and its self-signature checked. */
export interface ParsedRequest {
  /** The request as the library reads it: its subject name and public key, as sent. */
  request: Pkcs10CertificateRequest;
  /** Its CommonName (the last, as Go reads it) and Organizations. */
  subject: Subject;
  /** The types of the subject's attributes in order (CN, O, OU, or an OID for one unnamed). */
  subjectAttributes: string[];
  altNames: AltNames;
}

/** A refusal of the request, with the message that says why. */
export class RequestError extends Error {}

/** The DER of the text's one PEM block, which must be a CERTIFICATE REQUEST. */
function requestDer(text: string): ArrayBuffer {
  if (text.length > MAX_REQUEST_CHARS)
    throw new RequestError(
      `the request is ${text.length} characters long; a certificate request is at most ${MAX_REQUEST_CHARS}`,
    );
  let blocks: { type: string; rawData: ArrayBuffer }[];
  try {
    blocks = PemConverter.decodeWithHeaders(text);
  } catch (err) {
    throw new RequestError(`malformed certificate request: ${messageOf(err)}`, { cause: err });
  }
  const [block] = blocks;
  // Kubernetes reads the first block alone: the one checked must be the one it reads.
  if (!block) throw new RequestError("not a PEM block of type CERTIFICATE REQUEST");
  if (block.type !== "CERTIFICATE REQUEST")
    throw new RequestError(`the PEM block is of type ${quoted(block.type)}, not CERTIFICATE REQUEST`);
  if (blocks.length > 1)
    throw new RequestError(`the text holds ${blocks.length} PEM blocks; send one CERTIFICATE REQUEST`);
  return block.rawData;
}

const trailing = (n: number): string => (n === 1 ? "1 byte follows" : `${n} bytes follow`);

/** The request's ASN.1, when `der` is exactly one DER-encoded CertificationRequest. */
function requestAsn(der: ArrayBuffer): CertificationRequest {
  let asn: CertificationRequest;
  try {
    asn = AsnConvert.parse(der, CertificationRequest, PARSE_OPTIONS);
  } catch (err) {
    throw new RequestError(`malformed certificate request: ${messageOf(err)}`, { cause: err });
  }
  // asn1js reads BER and stops at the end of the first value; Go's parser (Kubernetes, HyperShift)
  // takes DER alone and refuses trailing data. Re-encoding tells both apart from DER.
  const sent = Buffer.from(der);
  const encoded = Buffer.from(AsnConvert.serialize(asn));
  if (sent.length > encoded.length && sent.subarray(0, encoded.length).equals(encoded))
    throw new RequestError(
      `malformed certificate request: ${trailing(sent.length - encoded.length)} the request's DER encoding`,
    );
  if (!sent.equals(encoded))
    throw new RequestError("malformed certificate request: not in DER (distinguished) encoding");
  if (asn.certificationRequestInfo.attributes === undefined)
    throw new RequestError("malformed certificate request: the attributes field ([0]) is missing");
  return asn;
}

/** The request's public key, as Node reads it. */
function publicKeyOf(request: Pkcs10CertificateRequest): KeyObject {
  try {
    return createPublicKey({ key: Buffer.from(request.publicKey.rawData), format: "der", type: "spki" });
  } catch (err) {
    throw new RequestError(`malformed certificate request: unreadable public key (${messageOf(err)})`, {
      cause: err,
    });
  }
}

const WANTED_KEY = `want EC P-256 or RSA of at least ${MIN_RSA_BITS} bits`;

/** Refuses a key other than EC P-256 or RSA of 2048 to 16384 bits, or one not of the signature's kind. */
function checkKey(key: KeyObject, signatureOid: string): void {
  if (key.asymmetricKeyType === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve !== "prime256v1")
      throw new RequestError(`unsupported key: EC on curve ${curve ?? "unknown"} (${WANTED_KEY})`);
    if (signatureOid !== OID.ecdsaWithSHA256)
      throw new RequestError("the request signs an EC key with an RSA signature algorithm");
    return;
  }
  if (key.asymmetricKeyType !== "rsa")
    throw new RequestError(`unsupported key: ${key.asymmetricKeyType ?? "unknown"} (${WANTED_KEY})`);
  checkRsaKey(key);
  if (signatureOid !== OID.sha256WithRSA)
    throw new RequestError("the request signs an RSA key with an ECDSA signature algorithm");
}

function checkRsaKey(key: KeyObject): void {
  const { modulusLength = 0, publicExponent = 0n } = key.asymmetricKeyDetails ?? {};
  if (modulusLength < MIN_RSA_BITS)
    throw new RequestError(`unsupported key: RSA of ${modulusLength} bits (${WANTED_KEY})`);
  if (modulusLength > MAX_RSA_BITS)
    throw new RequestError(`unsupported key: RSA of ${modulusLength} bits (at most ${MAX_RSA_BITS})`);
  if (publicExponent > MAX_RSA_EXPONENT)
    throw new RequestError(`unsupported key: an RSA public exponent above ${MAX_RSA_EXPONENT}`);
}

/** The library's kinds of GeneralName that Go reads, by the field of AltNames they go to. */
const ALT_NAME_KINDS: Record<string, Exclude<keyof AltNames, "other">> = {
  dns: "dns",
  email: "email",
  ip: "ip",
  url: "uri",
};

/** The subjectAltNames of every subjectAltName extension requested. */
function altNamesOf(request: Pkcs10CertificateRequest, asn: CertificationRequest): AltNames {
  const requests = asn.certificationRequestInfo.attributes.filter((a) => a.type === OID.extensionRequest);
  // Go reads the extensions of every extensionRequest attribute, the library the first one's.
  if (requests.length > 1)
    throw new RequestError(`the request holds ${requests.length} extensionRequest attributes; one at most`);
  const names: AltNames = { dns: [], email: [], ip: [], uri: [], other: [] };
  for (const ext of request.getExtensions(OID.subjectAltName)) {
    let san: SubjectAlternativeNameExtension;
    try {
      san = new SubjectAlternativeNameExtension(ext.rawData, PARSE_OPTIONS);
    } catch (err) {
      throw new RequestError(`malformed certificate request: unreadable subjectAltName (${messageOf(err)})`, {
        cause: err,
      });
    }
    for (const { type, value } of san.names.items) {
      const kind = ALT_NAME_KINDS[type];
      if (kind) names[kind].push(value);
      else names.other.push(type);
    }
  }
  return names;
}

function subjectOf(request: Pkcs10CertificateRequest): Pick<ParsedRequest, "subject" | "subjectAttributes"> {
  const attributes = request.subjectName
    .toJSON()
    .flatMap((rdn) =>
      Object.entries(rdn).flatMap(([type, values]) => values.map((value) => ({ type, value }))),
    );
  const valuesOf = (type: string) => attributes.filter((a) => a.type === type).map((a) => a.value);
  const organizations = valuesOf("O");
  return {
    subject: {
      commonName: valuesOf("CN").at(-1) ?? "",
      ...(organizations.length > 0 ? { organizations } : {}),
    },
    subjectAttributes: attributes.map((a) => a.type),
  };
}

/** The request's signature algorithm, SHA-256 with ECDSA or RSA, with the parameters they take. */
function checkSignatureAlgorithm(asn: CertificationRequest): string {
  const { algorithm, parameters } = asn.signatureAlgorithm;
  if (algorithm !== OID.ecdsaWithSHA256 && algorithm !== OID.sha256WithRSA)
    throw new RequestError(
      `unsupported signature algorithm ${quoted(algorithm)} (want SHA-256 with ECDSA or RSA)`,
    );
  // RFC 5758: ECDSA's have no parameters; RFC 4055: RSA's are NULL (the library reads it as null).
  const allowed = algorithm === OID.ecdsaWithSHA256 ? parameters === undefined : !parameters;
  if (!allowed)
    throw new RequestError(
      "malformed certificate request: the signature algorithm's parameters are not those it takes (none for ECDSA, NULL for RSA)",
    );
  return algorithm;
}

/**
 * Reads a PEM certificate request and checks its form, key, signature algorithm and signature.
 * Throws a RequestError saying what is wrong.
 */
export async function parseCertificateRequest(text: string): Promise<ParsedRequest> {
  const asn = requestAsn(requestDer(text));
  const signatureOid = checkSignatureAlgorithm(asn);
  let request: Pkcs10CertificateRequest;
  let parsed: Omit<ParsedRequest, "request">;
  try {
    request = new Pkcs10CertificateRequest(asn, PARSE_OPTIONS);
    checkKey(publicKeyOf(request), signatureOid);
    parsed = { ...subjectOf(request), altNames: altNamesOf(request, asn) };
  } catch (err) {
    if (err instanceof RequestError) throw err;
    throw new RequestError(`malformed certificate request: ${messageOf(err)}`, { cause: err });
  }
  let verified = false;
  try {
    verified = await request.verify();
  } catch {
    // A signature WebCrypto cannot even read (an ECDSA value that is no DER pair) does not verify.
  }
  if (!verified) throw new RequestError("the request's signature does not verify");
  return { request, ...parsed };
}

/** Why HyperShift's signer would refuse these subjectAltNames (its wording), if it would. */
function altNamesProblem(names: AltNames): string | undefined {
  const kinds: [string, string[]][] = [
    ["DNS", names.dns],
    ["Email", names.email],
    ["IP", names.ip],
    ["URI", names.uri],
  ];
  const found = kinds.find(([, values]) => values.length > 0);
  if (found) return `${found[0]} subjectAltNames are not allowed in a client certificate request`;
  if (names.other.length > 0)
    return `subjectAltNames (${names.other.join(", ")}) are not allowed in a client certificate request`;
  return undefined;
}

/**
 * What HyperShift's break-glass signer refuses in a request for `signerClass`, checked before the
 * request travels: undefined when it would be signed, else why not.
 */
export async function breakGlassRequestProblem(
  text: string,
  signerClass: string,
): Promise<string | undefined> {
  let parsed: ParsedRequest;
  try {
    parsed = await parseCertificateRequest(text);
  } catch (err) {
    return messageOf(err);
  }
  const other = parsed.subjectAttributes.filter((type) => type !== "CN" && type !== "O");
  if (other.length > 0)
    return `the subject holds ${[...new Set(other)].map(quoted).join(", ")}; only CommonName (CN) and Organization (O) are allowed`;
  const commonNames = parsed.subjectAttributes.filter((type) => type === "CN").length;
  if (commonNames !== 1) return `the subject holds ${commonNames} CommonNames (CN); it must hold one`;
  const prefix = `system:${signerClass}:`;
  const { commonName } = parsed.subject;
  if (!commonName.startsWith(prefix) || commonName === prefix)
    return `the subject CommonName ${quoted(commonName)} must begin with "${prefix}" and name the user after it`;
  return altNamesProblem(parsed.altNames);
}

/** A value from the request, quoted and cut short: it is the sender's text. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** An error's message, cut short: the library's may quote the input. */
function messageOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
