import "reflect-metadata";
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
  X509Certificate as ParsedCertificate,
} from "@peculiar/x509";
import { generateKeyPairSync, webcrypto, X509Certificate } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestCA, issueClientCertificate } from "../../test/support/certificates.ts";
import type { BrokerCertificateRequest } from "../cloudevents/codec/broker-certificate.ts";
import { certificateRequest, type Subject } from "../hcp/pkcs10.ts";
import { AgentCertificateSigner, noSignerAnswer } from "./agent-certificates.ts";

const HOUR = 3_600_000;
let ca: { certPath: string; keyPath: string; certPem: string; keyPem: string };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-certs-"));
  const made = await createTestCA("agents");
  ca = { ...made, certPath: join(dir, "ca.crt"), keyPath: join(dir, "ca.key") };
  await writeFile(ca.certPath, made.certPem);
  await writeFile(ca.keyPath, made.keyPem);
});

async function request(subject: Subject, consumer = "mgmt-1"): Promise<BrokerCertificateRequest> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    consumer,
    requestId: "r-1",
    certificateSigningRequest: await certificateRequest(privateKey, subject),
  };
}

function keyUsage(pem: string): { critical: boolean; usages: number } | undefined {
  const usage = new ParsedCertificate(pem).getExtension(KeyUsagesExtension);
  return usage ? { critical: usage.critical, usages: usage.usages } : undefined;
}

function signer(now = new Date(), lifetimeMs = HOUR): AgentCertificateSigner {
  return new AgentCertificateSigner({
    certFile: ca.certPath,
    keyFile: ca.keyPath,
    lifetimeMs,
    now: () => now,
  });
}

describe("AgentCertificateSigner", () => {
  it("signs a request for the consumer's own name: clientAuth, from the agents' CA, for its lifetime", async () => {
    const now = new Date();
    const answer = await signer(now).answer(await request({ commonName: "mgmt-1" }));
    expect(answer).toMatchObject({ consumer: "mgmt-1", requestId: "r-1" });
    if (!("certificate" in answer)) throw new Error(`refused: ${answer.refused}`);
    const cert = new X509Certificate(answer.certificate);
    const caCert = new X509Certificate(await readFile(ca.certPath));
    expect(cert.checkIssued(caCert) && cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.subject).toBe("CN=mgmt-1");
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(cert.ca).toBe(false);
    const constraints = new ParsedCertificate(answer.certificate).getExtension(BasicConstraintsExtension);
    expect(constraints).toMatchObject({ ca: false, critical: true });
    expect(keyUsage(answer.certificate)).toEqual({ critical: true, usages: KeyUsageFlags.digitalSignature });
    expect(Date.parse(cert.validTo)).toBe(Math.floor((now.getTime() + HOUR) / 1000) * 1000);
    expect(Date.parse(cert.validFrom)).toBeLessThan(now.getTime());
  });

  it("never signs past the CA's own expiry", async () => {
    const answer = await signer(new Date(), 100 * 365 * 24 * HOUR).answer(
      await request({ commonName: "mgmt-1" }),
    );
    if (!("certificate" in answer)) throw new Error(answer.refused);
    const caCert = new X509Certificate(await readFile(ca.certPath));
    expect(new X509Certificate(answer.certificate).validTo).toBe(caCert.validTo);
  });

  it.each<[string, Subject, RegExp]>([
    ["another consumer's name", { commonName: "mgmt-2" }, /subject must be CN=mgmt-1 alone/],
    [
      "an organization",
      { commonName: "mgmt-1", organizations: ["system:masters"] },
      /subject must be CN=mgmt-1 alone/,
    ],
  ])("refuses a request with %s, saying why", async (_name, subject, why) => {
    const answer = await signer().answer(await request(subject));
    expect(answer).toMatchObject({
      consumer: "mgmt-1",
      requestId: "r-1",
      refused: expect.stringMatching(why),
    });
  });

  it("refuses a request with subjectAltNames", async () => {
    const keys = await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ]);
    const csr = await Pkcs10CertificateRequestGenerator.create({
      name: "CN=mgmt-1",
      keys,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      extensions: [new SubjectAlternativeNameExtension([{ type: "dns", value: "broker.example" }])],
    });
    const answer = await signer().answer({
      consumer: "mgmt-1",
      requestId: "r",
      certificateSigningRequest: csr.toString("pem"),
    });
    expect("refused" in answer && answer.refused).toMatch(/subjectAltNames/);
  });

  it("refuses a key other than EC P-256 or RSA of 2048 to 4096 bits", async () => {
    const p384 = await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-384" }, false, [
      "sign",
      "verify",
    ]);
    const csr = await Pkcs10CertificateRequestGenerator.create({
      name: "CN=mgmt-1",
      keys: p384,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    });
    const s = signer();
    const ec = await s.answer({
      consumer: "mgmt-1",
      requestId: "r",
      certificateSigningRequest: csr.toString("pem"),
    });
    expect("refused" in ec && ec.refused).toMatch(/unsupported key: EC on curve/);
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 4160 });
    const big = await s.answer({
      consumer: "mgmt-1",
      requestId: "r",
      certificateSigningRequest: await certificateRequest(privateKey, { commonName: "mgmt-1" }),
    });
    expect("refused" in big && big.refused).toMatch(/RSA of 4160 bits/);
  });

  it("signs an RSA key for key encipherment too", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const answer = await signer().answer({
      consumer: "mgmt-1",
      requestId: "r",
      certificateSigningRequest: await certificateRequest(privateKey, { commonName: "mgmt-1" }),
    });
    if (!("certificate" in answer)) throw new Error(answer.refused);
    expect(keyUsage(answer.certificate)).toEqual({
      critical: true,
      usages: KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment,
    });
  });

  it("refuses what is no certificate request", async () => {
    const answer = await signer().answer({
      consumer: "mgmt-1",
      requestId: "r",
      certificateSigningRequest: "hello",
    });
    expect("refused" in answer && answer.refused).toMatch(/CERTIFICATE REQUEST/);
  });

  it("signs for a consumer at most once a minute, saying when to ask again", async () => {
    const s = signer(new Date("2026-01-01T00:00:00Z"));
    expect("certificate" in (await s.answer(await request({ commonName: "mgmt-1" })))).toBe(true);
    const again = await s.answer(await request({ commonName: "mgmt-1" }));
    expect("refused" in again && again.refused).toMatch(/ask again after 2026-01-01T00:01:00.000Z/);
    // Another consumer is not held back.
    expect("certificate" in (await s.answer(await request({ commonName: "mgmt-2" }, "mgmt-2")))).toBe(true);
  });

  it("refuses to start with a certificate that is no CA, or a key that is not the CA's", async () => {
    const issued = await issueClientCertificate(ca, {
      commonName: "x",
      notBefore: new Date(),
      notAfter: new Date(Date.now() + HOUR),
    });
    const leaf = { certPath: join(dir, "leaf.crt"), keyPath: join(dir, "leaf.key") };
    await writeFile(leaf.certPath, issued.cert);
    await writeFile(leaf.keyPath, issued.key);
    expect(() => new AgentCertificateSigner({ certFile: leaf.certPath, keyFile: leaf.keyPath })).toThrow(
      /is not a CA certificate/,
    );
    expect(() => new AgentCertificateSigner({ certFile: ca.certPath, keyFile: leaf.keyPath })).toThrow(
      /is not the key of/,
    );
    expect(() => new AgentCertificateSigner({ certFile: join(dir, "none"), keyFile: ca.keyPath })).toThrow(
      /--agent-certificate-signer-cert/,
    );
  });

  it("answers every request with a refusal when the region has no signer", () => {
    const answer = noSignerAnswer({ consumer: "mgmt-1", requestId: "r", certificateSigningRequest: "" });
    expect("refused" in answer && answer.refused).toMatch(/does not renew agent certificates/);
  });
});
