import { generateKeyPairSync } from "node:crypto";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  breakGlassRequestProblem,
  certificateRequest,
  MAX_REQUEST_CHARS,
  parseCertificateRequest,
} from "./pkcs10.ts";

const ec = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
const CLASS = "customer-break-glass";

/** A request openssl makes with a new key of `newkey` and these further arguments. */
function opensslRequest(newkey: string[], ...args: string[]): string {
  return execFileSync("openssl", ["req", "-new", "-nodes", "-keyout", "/dev/null", ...newkey, ...args], {
    stdio: ["ignore", "pipe", "ignore"],
  }).toString();
}
const P256 = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];

const derOf = (pem: string): Buffer => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64");
const pemOf = (der: Buffer, label = "CERTIFICATE REQUEST"): string =>
  `-----BEGIN ${label}-----\n${(der.toString("base64").match(/.{1,64}/g) ?? []).join("\n")}\n-----END ${label}-----\n`;

describe("PKCS#10 requests", () => {
  it("makes a request openssl reads and verifies, and reads it back", async () => {
    const key = ec();
    const pem = await certificateRequest(key, {
      commonName: "system:customer-break-glass:alice",
      organizations: ["system:masters"],
    });
    const text = execFileSync("openssl", ["req", "-verify", "-noout", "-subject"], {
      input: pem,
      stdio: ["pipe", "pipe", "ignore"],
    }).toString();
    expect(text).toMatch(/O ?= ?system:masters, ?CN ?= ?system:customer-break-glass:alice/);
    const parsed = await parseCertificateRequest(pem);
    expect(parsed.subject).toEqual({
      commonName: "system:customer-break-glass:alice",
      organizations: ["system:masters"],
    });
    expect(parsed.altNames.dns).toEqual([]);
    expect(await breakGlassRequestProblem(pem, CLASS)).toBeUndefined();
  });

  it("makes an RSA request openssl verifies", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = await certificateRequest(privateKey, { commonName: "system:customer-break-glass:rsa" });
    const text = execFileSync("openssl", ["req", "-verify", "-noout", "-subject"], {
      input: pem,
      stdio: ["pipe", "pipe", "ignore"],
    }).toString();
    expect(text).toMatch(/CN ?= ?system:customer-break-glass:rsa/);
    expect(await breakGlassRequestProblem(pem, CLASS)).toBeUndefined();
  });

  it("reads an RSA request openssl made, with its DNS names", async () => {
    const pem = opensslRequest(
      ["-newkey", "rsa:2048"],
      "-subj",
      "/CN=system:customer-break-glass:bob",
      "-addext",
      "subjectAltName=DNS:evil.example.com",
    );
    const parsed = await parseCertificateRequest(pem);
    expect(parsed.subject.commonName).toBe("system:customer-break-glass:bob");
    expect(parsed.altNames.dns).toEqual(["evil.example.com"]);
    expect(await breakGlassRequestProblem(pem, CLASS)).toMatch(/DNS subjectAltNames/);
  });

  it("refuses garbage, a tampered signature, and a subject the signer would deny", async () => {
    expect(await breakGlassRequestProblem("hello", CLASS)).toMatch(/not a PEM block/);
    expect(
      await breakGlassRequestProblem(
        "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
        CLASS,
      ),
    ).toMatch(/malformed certificate request/);
    const good = await certificateRequest(ec(), { commonName: "system:customer-break-glass:carol" });
    expect(await breakGlassRequestProblem(good, CLASS)).toBeUndefined();
    const der = derOf(good);
    der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0xff;
    expect(await breakGlassRequestProblem(pemOf(der), CLASS)).toMatch(/signature|malformed/);
    const wrong = await certificateRequest(ec(), { commonName: "admin" });
    expect(await breakGlassRequestProblem(wrong, CLASS)).toMatch(/CommonName "admin" must begin/);
  });

  it("refuses a request that is truncated, has trailing bytes, claims a huge length or is BER", async () => {
    const der = derOf(await certificateRequest(ec(), { commonName: "system:customer-break-glass:dan" }));
    expect(await breakGlassRequestProblem(pemOf(der.subarray(0, der.length - 10)), CLASS)).toMatch(
      /^malformed certificate request: /,
    );
    expect(await breakGlassRequestProblem(pemOf(Buffer.concat([der, Buffer.from([0, 0])])), CLASS)).toBe(
      "malformed certificate request: 2 bytes follow the request's DER encoding",
    );
    // The outer SEQUENCE's content, then the same claiming 2^32-1 bytes, and its own length in
    // four bytes: BER allows a longer form than needed, DER does not.
    const lengthByte = der[1] ?? 0;
    const content = der.subarray(lengthByte & 0x80 ? 2 + (lengthByte & 0x7f) : 2);
    const huge = Buffer.concat([Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), content]);
    expect(await breakGlassRequestProblem(pemOf(huge), CLASS)).toMatch(/^malformed certificate request: /);
    const long = Buffer.alloc(4);
    long.writeUInt32BE(content.length);
    const ber = Buffer.concat([Buffer.from([0x30, 0x84]), long, content]);
    expect(await breakGlassRequestProblem(pemOf(ber), CLASS)).toBe(
      "malformed certificate request: not in DER (distinguished) encoding",
    );
  });

  it("refuses signature algorithm parameters the algorithm does not take", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const der = derOf(
      await certificateRequest(privateKey, { commonName: "system:customer-break-glass:rsa" }),
    );
    // sha256WithRSAEncryption's NULL parameters made an empty OCTET STRING: the signature still
    // verifies (it covers the info alone), and re-encoding gives the same bytes.
    const sha256WithRsa = Buffer.from("06092a864886f70d01010b0500", "hex");
    const at = der.indexOf(sha256WithRsa);
    expect(at).toBeGreaterThan(0);
    der[at + sha256WithRsa.length - 2] = 0x04;
    expect(await breakGlassRequestProblem(pemOf(der), CLASS)).toBe(
      "malformed certificate request: the signature algorithm's parameters are not those it takes (none for ECDSA, NULL for RSA)",
    );
  });

  it("refuses other PEM blocks, more than one block, and an oversized text", async () => {
    const pem = await certificateRequest(ec(), { commonName: "system:customer-break-glass:erin" });
    expect(await breakGlassRequestProblem(pemOf(derOf(pem), "CERTIFICATE"), CLASS)).toBe(
      'the PEM block is of type "CERTIFICATE", not CERTIFICATE REQUEST',
    );
    expect(await breakGlassRequestProblem(pem + pem, CLASS)).toBe(
      "the text holds 2 PEM blocks; send one CERTIFICATE REQUEST",
    );
    expect(await breakGlassRequestProblem(pem + " ".repeat(MAX_REQUEST_CHARS), CLASS)).toMatch(
      /characters long; a certificate request is at most 65536$/,
    );
  });

  it("refuses keys and signature algorithms HyperShift's signer is not given", async () => {
    const subj = ["-subj", "/CN=system:customer-break-glass:frank"];
    const cases: [string, string[], RegExp][] = [
      ["P-384", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-sha256"], /EC on curve secp384r1/],
      ["RSA 1024", ["-newkey", "rsa:1024"], /RSA of 1024 bits \(want EC P-256 or RSA of at least 2048/],
      ["Ed25519", ["-newkey", "ed25519"], /unsupported signature algorithm "1\.3\.101\.112"/],
      ["SHA-1", [...P256, "-sha1"], /unsupported signature algorithm "1\.2\.840\.10045\.4\.1"/],
      ["SHA-384", [...P256, "-sha384"], /unsupported signature algorithm "1\.2\.840\.10045\.4\.3\.3"/],
      [
        "RSA-PSS",
        ["-newkey", "rsa:2048", "-sigopt", "rsa_padding_mode:pss"],
        /unsupported signature algorithm "1\.2\.840\.113549\.1\.1\.10"/,
      ],
    ];
    for (const [name, newkey, refusal] of cases)
      expect(await breakGlassRequestProblem(opensslRequest(newkey, ...subj), CLASS), name).toMatch(refusal);
  });

  it("refuses subject attributes other than one CN and Os, and every kind of subjectAltName", async () => {
    const cases: [string[], string][] = [
      [
        ["-subj", "/O=system:masters/OU=ops/CN=system:customer-break-glass:gina"],
        'the subject holds "OU"; only CommonName (CN) and Organization (O) are allowed',
      ],
      [
        ["-subj", "/CN=system:customer-break-glass:gina/CN=admin"],
        "the subject holds 2 CommonNames (CN); it must hold one",
      ],
      [["-subj", "/O=system:masters"], "the subject holds 0 CommonNames (CN); it must hold one"],
      [
        ["-subj", "/CN=system:customer-break-glass:gina", "-addext", "subjectAltName=email:g@example.com"],
        "Email subjectAltNames are not allowed in a client certificate request",
      ],
      [
        ["-subj", "/CN=system:customer-break-glass:gina", "-addext", "subjectAltName=IP:10.0.0.1"],
        "IP subjectAltNames are not allowed in a client certificate request",
      ],
      [
        ["-subj", "/CN=system:customer-break-glass:gina", "-addext", "subjectAltName=URI:https://x.example"],
        "URI subjectAltNames are not allowed in a client certificate request",
      ],
    ];
    for (const [args, refusal] of cases)
      expect(await breakGlassRequestProblem(opensslRequest(P256, ...args), CLASS), args.join(" ")).toBe(
        refusal,
      );
    // Extensions HyperShift's signer ignores (it sets the certificate's own) do not refuse a request.
    const withUsages = opensslRequest(
      P256,
      "-subj",
      "/O=system:masters/CN=system:customer-break-glass:gina",
      "-addext",
      "keyUsage=critical,digitalSignature",
      "-addext",
      "extendedKeyUsage=clientAuth",
    );
    expect(await breakGlassRequestProblem(withUsages, CLASS)).toBeUndefined();
  });
});
