/**
 * The simulator's certificate authorities, one set per hosted control plane, kept where HyperShift
 * keeps them in the control plane's namespace: the break-glass signer of each signer class, the
 * Secret `customer-system-admin-signer` (tls.crt, tls.key) and its trust bundle ConfigMap
 * `customer-system-admin-signer-ca` (ca-bundle.crt); and the root CA the API server's serving
 * certificate chains to, the ConfigMap `root-ca` (ca.crt). Certificates are built with node:crypto and the DER writer the
 * product uses for its requests.
 */
import {
  generateKeyPairSync,
  randomBytes,
  X509Certificate,
  createPrivateKey,
  type KeyObject,
} from "node:crypto";
import { ConfigMapResource, SecretResource } from "../../operators/api/core.ts";
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from "../../operators/api/hypershift/v1beta1.ts";
import {
  bitString,
  context,
  encodeName,
  integer,
  oid,
  pem,
  seq,
  signatureAlgorithm,
  signWith,
  tlv,
  type ParsedRequest,
  type Subject,
} from "../../operators/hcp/pkcs10.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";

export const SIGNER_SECRET = "customer-system-admin-signer";
export const SIGNER_BUNDLE = "customer-system-admin-signer-ca";
/** How long a signer CA lives (HyperShift: seven days). */
const CA_VALIDITY_MS = 7 * 24 * 3600 * 1000;
/** NotBefore is backdated this much for clock skew, as HyperShift's signer does. */
const BACKDATE_MS = 5 * 60 * 1000;

export interface Signer {
  certificate: string;
  key: KeyObject;
  cert: X509Certificate;
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`))
    : tlv(0x18, Buffer.from(`${iso}Z`));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

interface CertificateInput {
  subject: Subject;
  spki: Buffer;
  issuer: Subject;
  issuerKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
}

function certificate(input: CertificateInput): string {
  const extensions = input.ca
    ? [
        extension("2.5.29.19", true, seq(tlv(0x01, Buffer.from([0xff])))),
        extension("2.5.29.15", true, tlv(0x03, Buffer.from([0x01, 0x06]))),
      ]
    : [
        extension("2.5.29.19", true, seq()),
        extension("2.5.29.15", true, tlv(0x03, Buffer.from([0x07, 0x80]))),
        extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.2"))),
      ];
  const algorithm = signatureAlgorithm(input.issuerKey);
  const tbs = seq(
    context(0, integer(2)),
    integer(randomBytes(16)),
    algorithm,
    encodeName(input.issuer),
    seq(time(input.notBefore), time(input.notAfter)),
    encodeName(input.subject),
    input.spki,
    context(3, seq(...extensions)),
  );
  return pem("CERTIFICATE", seq(tbs, algorithm, bitString(signWith(input.issuerKey, tbs))));
}

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: string | undefined): string => Buffer.from(s ?? "", "base64").toString("utf8");

/** A new self-signed signer CA for a control plane, valid from `notBefore`. */
function newSigner(namespace: string, notBefore: Date): { certificate: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const subject = { commonName: "customer-break-glass-signer", organizations: [namespace] };
  const cert = certificate({
    subject,
    issuer: subject,
    spki: publicKey.export({ type: "spki", format: "der" }),
    issuerKey: privateKey,
    notBefore,
    notAfter: new Date(notBefore.getTime() + CA_VALIDITY_MS),
    ca: true,
  });
  return { certificate: cert, key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
}

function signerOf(secret: KubeObject | undefined): Signer | undefined {
  const data = (secret as { data?: Record<string, string> } | undefined)?.data;
  if (!data?.["tls.crt"] || !data["tls.key"]) return undefined;
  const certificate = unb64(data["tls.crt"]);
  return {
    certificate,
    key: createPrivateKey(unb64(data["tls.key"])),
    cert: new X509Certificate(certificate),
  };
}

/** The control plane's signer, made on first use; the first one written stays. */
export async function ensureSigner(client: KubeClient, namespace: string): Promise<Signer> {
  const existing = signerOf(await client.find(SecretResource, SIGNER_SECRET, namespace));
  if (existing) return existing;
  await writeSigner(client, namespace, newSigner(namespace, new Date(Date.now() - BACKDATE_MS)), false);
  const made = signerOf(await client.find(SecretResource, SIGNER_SECRET, namespace));
  if (!made) throw new Error(`Secret ${namespace}/${SIGNER_SECRET} holds no signer`);
  return made;
}

async function writeSigner(
  client: KubeClient,
  namespace: string,
  signer: { certificate: string; key: string },
  replace: boolean,
): Promise<void> {
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SIGNER_SECRET, namespace },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(signer.certificate), "tls.key": b64(signer.key) },
  } as KubeObject;
  const bundle = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: SIGNER_BUNDLE, namespace },
    data: { "ca-bundle.crt": signer.certificate },
  } as KubeObject;
  if (replace) {
    await client.apply(SecretResource, secret, { fieldManager: "hypershift-simulator", force: true });
    await client.apply(ConfigMapResource, bundle, { fieldManager: "hypershift-simulator", force: true });
    return;
  }
  await client.createIfAbsent(SecretResource, secret);
  await client.apply(ConfigMapResource, bundle, { fieldManager: "hypershift-simulator", force: true });
}

/**
 * Revocation: a new signer valid only from `revokedAt`, replacing the old one in the Secret and
 * the trust bundle, so nothing the old one signed chains to what the API server trusts.
 */
export async function rotateSigner(client: KubeClient, namespace: string, revokedAt: Date): Promise<void> {
  await writeSigner(client, namespace, newSigner(namespace, revokedAt), true);
}

/**
 * Signs a checked request: notBefore backdated, notAfter `expirationSeconds` from now, never past
 * the signer's own notAfter.
 */
export function sign(
  signer: Signer,
  request: ParsedRequest,
  expirationSeconds: number,
  now = new Date(),
): string {
  const caEnd = new Date(signer.cert.validTo).getTime();
  const notAfter = new Date(Math.min(now.getTime() + expirationSeconds * 1000, caEnd));
  return certificate({
    subject: request.subject,
    spki: request.spki,
    issuer: { commonName: "customer-break-glass-signer", organizations: [signerNamespace(signer)] },
    issuerKey: signer.key,
    notBefore: new Date(Math.max(now.getTime() - BACKDATE_MS, new Date(signer.cert.validFrom).getTime())),
    notAfter,
    ca: false,
  });
}

/** The O of the signer's subject (the control plane's namespace). */
function signerNamespace(signer: Signer): string {
  return /O=([^\n]+)/.exec(signer.cert.subject)?.[1] ?? "";
}

/** How long the control plane's root CA lives (HyperShift: ten years). */
const ROOT_CA_VALIDITY_MS = 10 * 365 * 24 * 3600 * 1000;

/**
 * The control plane's root CA, which HyperShift's serving certificates chain to, published as the
 * control-plane-operator does: the ConfigMap `root-ca` (ca.crt) in the control plane's namespace.
 * The simulator serves no TLS, so the key is not kept. The first one written stays.
 */
export async function ensureRootCA(client: KubeClient, namespace: string): Promise<string> {
  const read = async (): Promise<string | undefined> =>
    (
      await client.find<KubeObject & { data?: Record<string, string> }>(
        ConfigMapResource,
        ROOT_CA_CONFIGMAP,
        namespace,
      )
    )?.data?.[ROOT_CA_KEY];
  // Made first and created if absent: one request when it is new (the usual case, once per
  // control plane), a read of the one that stays when it is not.
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const subject = { commonName: "root-ca", organizations: ["openshift"] };
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  const ca = certificate({
    subject,
    issuer: subject,
    spki: publicKey.export({ type: "spki", format: "der" }),
    issuerKey: privateKey,
    notBefore,
    notAfter: new Date(notBefore.getTime() + ROOT_CA_VALIDITY_MS),
    ca: true,
  });
  const created = await client.createIfAbsent(ConfigMapResource, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: ROOT_CA_CONFIGMAP, namespace },
    data: { [ROOT_CA_KEY]: ca },
  });
  if (created) return ca;
  const existing = await read();
  if (!existing) throw new Error(`ConfigMap ${namespace}/${ROOT_CA_CONFIGMAP} holds no ${ROOT_CA_KEY}`);
  return existing;
}
