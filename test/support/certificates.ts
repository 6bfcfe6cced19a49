/**
 * Client certificates a test issues itself, with the validity it needs (the harness's openssl
 * certificates last ten years): signed by a CA whose PEM certificate and key the test holds,
 * through @peculiar/x509 as the product signs.
 */
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  X509Certificate,
  X509CertificateGenerator,
} from "@peculiar/x509";
import { createPrivateKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { subjectName, webKeys } from "../../operators/hcp/pkcs10.ts";

export interface IssuedCertificate {
  cert: string;
  key: string;
}

/** A new EC P-256 key and a clientAuth certificate for CN = `commonName`, valid over [notBefore, notAfter]. */
export async function issueClientCertificate(
  ca: { certPem: string; keyPem: string },
  opts: { commonName: string; notBefore: Date; notAfter: Date },
): Promise<IssuedCertificate> {
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const signer = webKeys(createPrivateKey(ca.keyPem));
  const cert = await X509CertificateGenerator.create({
    serialNumber: serial.toString("hex"),
    subject: subjectName({ commonName: opts.commonName }),
    issuer: new X509Certificate(ca.certPem).subjectName,
    notBefore: opts.notBefore,
    notAfter: opts.notAfter,
    publicKey: webKeys(privateKey).keys.publicKey,
    signingKey: signer.keys.privateKey,
    signingAlgorithm: signer.algorithm,
    extensions: [new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth], false)],
  });
  return { cert: cert.toString("pem"), key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
}

/** A new self-signed EC P-256 CA, valid from an hour ago for `days`. */
export async function createTestCA(
  commonName: string,
  days = 365,
): Promise<{ certPem: string; keyPem: string }> {
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { algorithm, keys } = webKeys(privateKey);
  const notBefore = new Date(Date.now() - 3_600_000);
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString("hex"),
    name: subjectName({ commonName }),
    notBefore,
    notAfter: new Date(notBefore.getTime() + days * 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new BasicConstraintsExtension(true, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign, true),
    ],
  });
  return {
    certPem: cert.toString("pem"),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}
