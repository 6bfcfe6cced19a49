/**
 * Client certificates signed by a CA this process holds: maestro-server's agent certificates,
 * and the HyperShift simulator's break-glass certificates, made the same way (a random positive
 * 128-bit serial, the CA's subject as issuer, never past the CA's own expiry, no CA, a signing key,
 * client authentication).
 */
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  X509Certificate as Certificate,
  X509CertificateGenerator,
  type JsonName,
  type PublicKey,
} from "@peculiar/x509";
import { randomBytes, type KeyObject, type webcrypto } from "node:crypto";
import { webKeys } from "./pkcs10.ts";

/** A random positive 128-bit serial number, in hex. */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

export interface SigningCA {
  /** The CA's certificate, PEM. */
  certificate: string;
  key: KeyObject;
}

export interface ClientCertificateRequest {
  subject: JsonName | Certificate["subjectName"];
  publicKey: PublicKey | webcrypto.CryptoKey;
  notBefore: Date;
  /** Cut to the CA's own expiry. */
  notAfter: Date;
  /** For an RSA key, which may also encipher. */
  keyEncipherment?: boolean;
}

/** A client certificate for the request, signed by `ca`, as PEM. */
export async function signClientCertificate(ca: SigningCA, req: ClientCertificateRequest): Promise<string> {
  const issuer = new Certificate(ca.certificate);
  const { algorithm, keys } = webKeys(ca.key);
  const usages = KeyUsageFlags.digitalSignature | (req.keyEncipherment ? KeyUsageFlags.keyEncipherment : 0);
  const cert = await X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: req.subject,
    issuer: issuer.subjectName,
    notBefore: req.notBefore,
    notAfter: new Date(Math.min(req.notAfter.getTime(), issuer.notAfter.getTime())),
    publicKey: req.publicKey,
    signingKey: keys.privateKey,
    signingAlgorithm: algorithm,
    extensions: [
      new BasicConstraintsExtension(false, undefined, true),
      new KeyUsagesExtension(usages, true),
      new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth], false),
    ],
  });
  return cert.toString("pem");
}
