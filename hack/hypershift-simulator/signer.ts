/**
 * The simulator's certificate authorities, one set per hosted control plane, kept where HyperShift
 * keeps them in the control plane's namespace: the break-glass signer of each signer class, the
 * Secret `customer-system-admin-signer` (tls.crt, tls.key) and its trust bundle ConfigMap
 * `customer-system-admin-signer-ca` (ca-bundle.crt); and the root CA the API server's serving
 * certificate chains to, the ConfigMap `root-ca` (ca.crt). Certificates are made with
 * @peculiar/x509, as the product makes its requests (operators/hcp/pkcs10.ts).
 */
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API loaded first.
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  X509CertificateGenerator,
  type Extension,
} from "@peculiar/x509";
import { generateKeyPairSync, X509Certificate, createPrivateKey, type KeyObject } from "node:crypto";
import { ConfigMapResource, SecretResource } from "../../operators/api/core.ts";
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from "../../operators/api/hypershift/v1beta1/index.ts";
import { subjectName, webKeys, type ParsedRequest, type Subject } from "../../operators/hcp/pkcs10.ts";
import { randomSerial, signClientCertificate } from "../../operators/hcp/x509.ts";
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
    extensions: caExtensions(),
  });
  return {
    certificate: cert.toString("pem"),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: string | undefined): string => Buffer.from(s ?? "", "base64").toString("utf8");

/** A new self-signed signer CA for a control plane, valid from `notBefore`. */
function newSigner(namespace: string, notBefore: Date): Promise<{ certificate: string; key: string }> {
  return selfSignedCA(
    { commonName: "customer-break-glass-signer", organizations: [namespace] },
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

/** The control plane's signer, made on first use; the first one written stays. */
export async function ensureSigner(client: KubeClient, namespace: string): Promise<Signer> {
  const existing = signerOf(await client.find(SecretResource, SIGNER_SECRET, namespace));
  if (existing) return existing;
  await writeSigner(client, namespace, await newSigner(namespace, new Date(Date.now() - BACKDATE_MS)), false);
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
  await writeSigner(client, namespace, await newSigner(namespace, revokedAt), true);
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
  const { certificate: ca } = await selfSignedCA(
    { commonName: "root-ca", organizations: ["openshift"] },
    new Date(Date.now() - BACKDATE_MS),
    ROOT_CA_VALIDITY_MS,
  );
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
