/**
 * Client certificates a test issues itself, with the validity it needs (the harness's openssl
 * certificates last ten years): signed by a CA whose PEM certificate and key the test holds,
 * as the product signs (operators/hcp/x509.ts).
 */
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { subjectName, webKeys } from "../../operators/hcp/pkcs10.ts";
import { randomSerial, signClientCertificate } from "../../operators/hcp/x509.ts";

export interface IssuedCertificate {
  cert: string;
  key: string;
}

/** A new EC P-256 key and a clientAuth certificate for CN = `commonName`, valid over [notBefore, notAfter]. */
export async function issueClientCertificate(
  ca: { certPem: string; keyPem: string },
  opts: { commonName: string; notBefore: Date; notAfter: Date },
): Promise<IssuedCertificate> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const cert = await signClientCertificate(
    { certificate: ca.certPem, key: createPrivateKey(ca.keyPem) },
    {
      subject: subjectName({ commonName: opts.commonName }),
      publicKey: webKeys(privateKey).keys.publicKey,
      notBefore: opts.notBefore,
      notAfter: opts.notAfter,
    },
  );
  return { cert, key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
}

/** A new self-signed EC P-256 CA, valid from an hour ago for `days`. */
export async function createTestCA(
  commonName: string,
  days = 365,
): Promise<{ certPem: string; keyPem: string }> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { algorithm, keys } = webKeys(privateKey);
  const notBefore = new Date(Date.now() - 3_600_000);
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
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
