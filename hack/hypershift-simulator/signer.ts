/**
 * The simulator's certificate authorities, one set per hosted control plane, kept where HyperShift
 * keeps them in the control plane's namespace: the break-glass signer of each signer class, the
 * Secret `<class>-system-admin-signer` (tls.crt, tls.key) and its trust bundle ConfigMap
 * `<class>-system-admin-signer-ca` (ca-bundle.crt), for the customer's and the SRE's classes; and
 * the root CA the API server's serving certificate chains to, published as the ConfigMap `root-ca`
 * (ca.crt) and kept with its key in the Secret `root-ca`. Certificates are made with
 * @peculiar/x509, as the product makes its requests (operators/hcp/pkcs10.ts).
 */
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API loaded first.
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
  type Extension,
} from "@peculiar/x509";
import { generateKeyPairSync, X509Certificate, createPrivateKey, type KeyObject } from "node:crypto";
import { ConfigMapResource, SecretResource } from "../../operators/api/core.ts";
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from "../../operators/api/hypershift/v1beta1/index.ts";
import { subjectName, webKeys, type ParsedRequest, type Subject } from "../../operators/hcp/pkcs10.ts";
import { randomSerial, signClientCertificate } from "../../operators/hcp/x509.ts";
import type { Lister } from "../../operators/runtime/informer.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";

export const SIGNER_SECRET = "customer-system-admin-signer";
export const SIGNER_BUNDLE = "customer-system-admin-signer-ca";

/** The signer classes simulated, and the Secret each one's CA is kept in (its bundle: `<Secret>-ca`). */
export const SIGNER_SECRETS = {
  "customer-break-glass": SIGNER_SECRET,
  "sre-break-glass": "sre-system-admin-signer",
} as const;
export type SignerClass = keyof typeof SIGNER_SECRETS;

export const bundleOf = (secret: string): string => `${secret}-ca`;
/** How long a signer CA lives (HyperShift: seven days). */
const CA_VALIDITY_MS = 7 * 24 * 3600 * 1000;
/** NotBefore is backdated this much for clock skew, as HyperShift's signer does. */
const BACKDATE_MS = 5 * 60 * 1000;

export interface Signer {
  certificate: string;
  key: KeyObject;
  cert: X509Certificate;
}

/** A CA's extensions: it signs certificates (and CRLs), and nothing else. */
const caExtensions = (): Extension[] => [
  new BasicConstraintsExtension(true, undefined, true),
  new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
];

/** A self-signed CA certificate for a new EC P-256 key, as PEM, with the key as PKCS#8 PEM. */
async function selfSignedCA(
  subject: Subject,
  notBefore: Date,
  validityMs: number,
): Promise<{ certificate: string; key: string }> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { algorithm, keys } = webKeys(privateKey);
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: subjectName(subject),
    notBefore,
    notAfter: new Date(notBefore.getTime() + validityMs),
    keys,
    signingAlgorithm: algorithm,
    // The key identifier lets tools that name the issuer by it (OpenSSL's authorityKeyIdentifier) sign with this CA.
    extensions: [...caExtensions(), await SubjectKeyIdentifierExtension.create(keys.publicKey)],
  });
  return {
    certificate: cert.toString("pem"),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

type DataObject = KubeObject & { data?: Record<string, string> };

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: string | undefined): string => Buffer.from(s ?? "", "base64").toString("utf8");

/** A new self-signed signer CA for a control plane, valid from `notBefore`. */
function newSigner(
  namespace: string,
  signerClass: SignerClass,
  notBefore: Date,
): Promise<{ certificate: string; key: string }> {
  return selfSignedCA(
    { commonName: `${signerClass}-signer`, organizations: [namespace] },
    notBefore,
    CA_VALIDITY_MS,
  );
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

/**
 * The control plane's signer of a class, made on first use; the first one written stays. Its
 * bundle is written from the Secret that stayed, so a writer that lost the race, or a crash
 * between the two writes, never leaves a bundle trusting a CA whose key nobody kept. `secrets`,
 * a cache holding the signers' Secrets whole (secret-cache.ts), spares the Secret's read when the
 * bundle trusts the cached CA.
 */
export async function ensureSigner(
  client: KubeClient,
  namespace: string,
  signerClass: SignerClass = "customer-break-glass",
  secrets?: Lister<KubeObject>,
): Promise<Signer> {
  const name = SIGNER_SECRETS[signerClass];
  // The bundle is read before the Secret: a rotation writes the Secret first, so a bundle that
  // differs is older than the Secret read, never newer (a repair never undoes a rotation). A
  // cached Secret the bundle, read afresh, does not trust may be behind a rotation: it is read
  // afresh too, and a repair follows only from that read.
  const bundle = await client.find<DataObject>(ConfigMapResource, bundleOf(name), namespace);
  const cached = signerOf(secrets?.get(namespace, name));
  let kept =
    cached && cached.certificate === bundle?.data?.["ca-bundle.crt"]
      ? cached
      : signerOf(await client.find(SecretResource, name, namespace));
  if (!kept) {
    const made = await newSigner(namespace, signerClass, new Date(Date.now() - BACKDATE_MS));
    await client.createIfAbsent(SecretResource, signerSecret(namespace, signerClass, made));
    kept = signerOf(await client.find(SecretResource, name, namespace));
    if (!kept) throw new Error(`Secret ${namespace}/${name} holds no signer`);
  }
  if (bundle?.data?.["ca-bundle.crt"] !== kept.certificate)
    await client.apply(ConfigMapResource, signerBundle(namespace, signerClass, kept.certificate), {
      fieldManager: "hypershift-simulator",
      force: true,
    });
  return kept;
}

const signerSecret = (
  namespace: string,
  signerClass: SignerClass,
  signer: { certificate: string; key: string },
): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: SIGNER_SECRETS[signerClass], namespace },
  type: "kubernetes.io/tls",
  data: { "tls.crt": b64(signer.certificate), "tls.key": b64(signer.key) },
});

const signerBundle = (namespace: string, signerClass: SignerClass, certificate: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: bundleOf(SIGNER_SECRETS[signerClass]), namespace },
  data: { "ca-bundle.crt": certificate },
});

/**
 * Revocation: a new signer valid only from `revokedAt`, replacing the old one in the Secret and
 * the trust bundle, so nothing the old one signed chains to what the API server trusts.
 */
export async function rotateSigner(
  client: KubeClient,
  namespace: string,
  signerClass: SignerClass,
  revokedAt: Date,
): Promise<void> {
  const made = await newSigner(namespace, signerClass, revokedAt);
  const options = { fieldManager: "hypershift-simulator", force: true };
  // The Secret first: a crash before the bundle is repaired by the next ensureSigner.
  await client.apply(SecretResource, signerSecret(namespace, signerClass, made), options);
  await client.apply(ConfigMapResource, signerBundle(namespace, signerClass, made.certificate), options);
}

/**
 * Signs a checked request: its subject and public key as sent, the signer's subject as issuer,
 * notBefore backdated, notAfter `expirationSeconds` from now, never past the signer's own notAfter.
 */
export function sign(
  signer: Signer,
  request: ParsedRequest,
  expirationSeconds: number,
  now = new Date(),
): Promise<string> {
  return signClientCertificate(
    { certificate: signer.certificate, key: signer.key },
    {
      subject: request.request.subjectName,
      publicKey: request.request.publicKey,
      notBefore: new Date(Math.max(now.getTime() - BACKDATE_MS, new Date(signer.cert.validFrom).getTime())),
      notAfter: new Date(now.getTime() + expirationSeconds * 1000),
    },
  );
}

/** How long the control plane's root CA lives (HyperShift: ten years). */
const ROOT_CA_VALIDITY_MS = 10 * 365 * 24 * 3600 * 1000;

export interface RootCA {
  certificate: string;
  /** PKCS#8 PEM. */
  key: string;
}

/**
 * The control plane's root CA, which HyperShift's serving certificates chain to, kept as the
 * control-plane-operator keeps it: the Secret `root-ca` (tls.crt, tls.key, ca.crt) with its key, so
 * a real API server can serve with a certificate it signs, and published as the ConfigMap `root-ca`
 * (ca.crt) for clients. Made first and created if absent: one request when it is new (the usual
 * case, once per control plane), a read of the one that stays when it is not. The ConfigMap is
 * written from the Secret that stayed, so the two never disagree, even after a crash between them.
 */
async function keptRootCA(client: KubeClient, namespace: string): Promise<RootCA> {
  const secret = await client.find<DataObject>(SecretResource, ROOT_CA_CONFIGMAP, namespace);
  const kept = { certificate: unb64(secret?.data?.["tls.crt"]), key: unb64(secret?.data?.["tls.key"]) };
  if (!kept.certificate || !kept.key) throw new Error(`Secret ${namespace}/${ROOT_CA_CONFIGMAP} holds no CA`);
  return kept;
}

export async function ensureRootCA(client: KubeClient, namespace: string): Promise<RootCA> {
  const made = await selfSignedCA(
    { commonName: "root-ca", organizations: ["openshift"] },
    new Date(Date.now() - BACKDATE_MS),
    ROOT_CA_VALIDITY_MS,
  );
  const created = await client.createIfAbsent(SecretResource, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: ROOT_CA_CONFIGMAP, namespace },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": b64(made.certificate),
      "tls.key": b64(made.key),
      [ROOT_CA_KEY]: b64(made.certificate),
    },
  });
  const kept = created ? made : await keptRootCA(client, namespace);
  // A new CA is published at once; a kept one only if the ConfigMap does not say it already.
  const published = created
    ? undefined
    : (await client.find<DataObject>(ConfigMapResource, ROOT_CA_CONFIGMAP, namespace))?.data?.[ROOT_CA_KEY];
  if (published !== kept.certificate)
    await client.apply(
      ConfigMapResource,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: ROOT_CA_CONFIGMAP, namespace },
        data: { [ROOT_CA_KEY]: kept.certificate },
      },
      { fieldManager: "hypershift-simulator", force: true },
    );
  return kept;
}
