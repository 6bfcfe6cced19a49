import { generateKeyPairSync } from "node:crypto";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { breakGlassRequestProblem, certificateRequest, parseCertificateRequest } from "./pkcs10.ts";

const ec = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;

describe("PKCS#10 requests", () => {
  it("makes a request openssl reads and verifies, and reads it back", () => {
    const key = ec();
    const pem = certificateRequest(key, {
      commonName: "system:customer-break-glass:alice",
      organizations: ["system:masters"],
    });
    const text = execFileSync("openssl", ["req", "-verify", "-noout", "-subject"], {
      input: pem,
      stdio: ["pipe", "pipe", "ignore"],
    }).toString();
    expect(text).toMatch(/O ?= ?system:masters, ?CN ?= ?system:customer-break-glass:alice/);
    const parsed = parseCertificateRequest(pem);
    expect(parsed.subject).toEqual({
      commonName: "system:customer-break-glass:alice",
      organizations: ["system:masters"],
    });
    expect(parsed.dnsNames).toEqual([]);
  });

  it("reads an RSA request openssl made, with its DNS names", () => {
    const pem = execFileSync(
      "openssl",
      [
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "/dev/null",
        "-subj",
        "/CN=system:customer-break-glass:bob",
        "-addext",
        "subjectAltName=DNS:evil.example.com",
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    ).toString();
    const parsed = parseCertificateRequest(pem);
    expect(parsed.subject.commonName).toBe("system:customer-break-glass:bob");
    expect(parsed.dnsNames).toEqual(["evil.example.com"]);
    expect(breakGlassRequestProblem(pem, "customer-break-glass")).toMatch(/DNS subjectAltNames/);
  });

  it("refuses garbage, a tampered signature, and a subject the signer would deny", () => {
    expect(breakGlassRequestProblem("hello", "customer-break-glass")).toMatch(/not a PEM block/);
    expect(
      breakGlassRequestProblem(
        "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
        "customer-break-glass",
      ),
    ).toMatch(/malformed certificate request/);
    const good = certificateRequest(ec(), { commonName: "system:customer-break-glass:carol" });
    expect(breakGlassRequestProblem(good, "customer-break-glass")).toBeUndefined();
    const der = Buffer.from(good.replace(/-----[^-]+-----|\s/g, ""), "base64");
    der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0xff;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(breakGlassRequestProblem(tampered, "customer-break-glass")).toMatch(/signature|malformed/);
    const wrong = certificateRequest(ec(), { commonName: "admin" });
    expect(breakGlassRequestProblem(wrong, "customer-break-glass")).toMatch(/CommonName "admin" must begin/);
  });
});
