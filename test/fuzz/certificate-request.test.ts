/**
 * Fuzz target of the client's certificate request (requestAdminCredential's
 * certificateSigningRequest in 2026-09-01-preview, and a BreakglassCredential's
 * spec.certificateSigningRequest): openssl's requests with bytes changed, cut short, lengthened,
 * or wrapped in PEM every way a client might, and any text at all. Whatever comes in, the frontend
 * answers with the request or a 400 CloudError naming certificateSigningRequest, in a short
 * message; nothing else is thrown. A request is accepted only as openssl made it, byte for byte
 * (its signature covers the info, DER the rest), and only one HyperShift's break-glass signer
 * would sign; openssl's requests that it would sign, unchanged in a PEM block Kubernetes reads,
 * are accepted.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { requestedCsr } from "../../operators/frontend/handlers/credentials.ts";
import { CloudError } from "../../operators/frontend/errors.ts";
import { hostileString } from "./arbitraries.ts";
import { fuzzTarget } from "./fuzz.ts";

/** Requests openssl made; `signable`: HyperShift's break-glass signer would sign it. */
const BASES: { what: string; der: Buffer; signable: boolean }[] = [
  [
    "EC P-256, O and CN",
    "MIIBADCBpwIBADBFMRcwFQYDVQQKDA5zeXN0ZW06bWFzdGVyczEqMCgGA1UEAwwhc3lzdGVtOmN1c3RvbWVyLWJyZWFrLWdsYXNzOmFsaWNlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEO2NfQWVCm1c/02q3brRAhzFL+PTuvgNIyG36fmDnxFzdVM3xIDOJamexbPgBfAX2mKCY9dbxDang6eq67WIqL6AAMAoGCCqGSM49BAMCA0gAMEUCIHEEbFE/HG3pXUPnuaIuWdk8Bp6TqgezAM53wc9EzIeFAiEA70KTRsBCYHzaHyri5YaZf5hAtMB0m3KJsL407Kw9mCc=",
    true,
  ],
  [
    "RSA 2048, CN",
    "MIICbzCCAVcCAQAwKjEoMCYGA1UEAwwfc3lzdGVtOmN1c3RvbWVyLWJyZWFrLWdsYXNzOmJvYjCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAKtZcl4ofsGNW540DlGpgUEvYJVQBJ/s0UqUzUhXUbJmAzS5K6BopvfVpoTZddyeWoaKfLO/9kbhJahjoCAfFiKzT2JIV/2hrxFXvPVGk84wVxjkKrSv14gfrd+eSu4iS887DR6daSLVjlZSt9TH5ceN+/9yYze+sIq6pIT8rH+nXnPE+038qNWFP+uU+ZIe/WeXfU/OJsQe56l+MeOHpCbQdniJ6QRVtBhROBmumz/ern+gWQfPPHNo7DTBrTLAPoiQjB1GHetMFZrE4qjFwT89If3yhRFBxm1npQwlbNBL5G+KRO2M9l/23WwdcF16Oii7QLAIcncfFuuGpU+o0UsCAwEAAaAAMA0GCSqGSIb3DQEBCwUAA4IBAQAUHvSkeqTBRegGH1r7v7NPc/9SWkkw7GuFA+FnHO0PsCW36MGLWhTt11gHIq9WdPg7rxm2AhpUvZlyYhx0DAcLFvm0mHVB4z53ikBXH7lPyS7lJmKiovKi3GTrXcAzMmgfcFHOBFarihlP38hyF0KNAiPfzfVu4IFUOta71aKHAWZMxpaGnfPhHs7USrCpQfdq0TxOA0IR9M05YgBVlYjATRZqiaTPhcWaZqLc3nLPfesoyrDPnMenAINikXcKk/v8dWusiTn8oEdC6KiKbSNvkJ8kdpH8yQ8FvCBY+w2z3vdeX2XM0uM952FIrlgUwl0+uW3d/3rIAqNo7jGD5CHR",
    true,
  ],
  [
    "EC P-256 with key usages",
    "MIIBNTCB3QIBADBFMRcwFQYDVQQKDA5zeXN0ZW06bWFzdGVyczEqMCgGA1UEAwwhc3lzdGVtOmN1c3RvbWVyLWJyZWFrLWdsYXNzOmNhcm9sMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAECMHSgaDINbJaP8otqPmpJJlxi/3PdVTjoGBiBCXJ9rWA8RPpA+bG+nFkYxv1xNr7qc3zeIISU1rSzKD9fKOszKA2MDQGCSqGSIb3DQEJDjEnMCUwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQMMAoGCCsGAQUFBwMCMAoGCCqGSM49BAMCA0cAMEQCIDqLrwPLTiPIHsQB5onheCdtmG+mVgS+MlrbiI1JFtP+AiB5PdhRiEfhVzBxoFvgnxaNhnRrgO0/dzon+jHYoH09Dg==",
    true,
  ],
  [
    "EC P-256 with DNS, email, IP and URI subjectAltNames",
    "MIIBOjCB4gIBADAqMSgwJgYDVQQDDB9zeXN0ZW06Y3VzdG9tZXItYnJlYWstZ2xhc3M6ZGFuMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE6Ucqa0YlsMTnQreFTDKza8nJGlLdZIaW4G49g+mNJomb/39NaWnj21F8FsE5b5iR6wI7SgHT6qL60NQDa1zmK6BWMFQGCSqGSIb3DQEJDjFHMEUwQwYDVR0RBDwwOoIQZXZpbC5leGFtcGxlLmNvbYENZEBleGFtcGxlLmNvbYcECgAAAYYRaHR0cHM6Ly94LmV4YW1wbGUwCgYIKoZIzj0EAwIDRwAwRAIgSmD1Z9xzcGG4vj4TeX3DrOY4FOSKM2U4vB7Rv6ss3hcCIA4hKvTxAe6NfPGAroZ4gaNrbdPrsSwRyzvPBcZDugca",
    false,
  ],
  [
    "EC P-256 with an OU",
    "MIHzMIGbAgEAMDkxDDAKBgNVBAsMA29wczEpMCcGA1UEAwwgc3lzdGVtOmN1c3RvbWVyLWJyZWFrLWdsYXNzOmVyaW4wWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAS3gSBsetQpd2byS5bQmuYVGCm0DZY2YiphsDoaNIsDNH2Ge0JavtxFkb27FqO8RuYU846F60UrdPBecCzHYO4NoAAwCgYIKoZIzj0EAwIDRwAwRAIgTXOk0gGuNNh2Rk+RCmMnmIM/bKY7QjdJPKaEVU8uQI4CIEECe+d8q9QZETrfculrXPfDOfanTW6aNU9zbYaobFhc",
    false,
  ],
].map(([what, base64, signable]) => ({
  what: String(what),
  der: Buffer.from(String(base64), "base64"),
  signable: signable === true,
}));

const WRAPS = ["pem", "crlf", "one-line", "two-blocks", "other-label", "base64", "junk-around"] as const;
/** The wraps Kubernetes reads a request from: one CERTIFICATE REQUEST block, lines of any end. */
const READABLE: readonly string[] = ["pem", "crlf", "junk-around"];

interface Changed {
  base: number;
  /** Bytes set: an offset (taken modulo the length) and its new value. */
  edits: { at: number; value: number }[];
  /** Cut to this many bytes (modulo the length), if set. */
  cut: number | null;
  append: number[];
  wrap: (typeof WRAPS)[number];
}

type Input = { changed: Changed } | { text: string };

const pemLines = (der: Buffer): string => (der.toString("base64").match(/.{1,64}/g) ?? []).join("\n");
const block = (der: Buffer, label = "CERTIFICATE REQUEST"): string =>
  `-----BEGIN ${label}-----\n${pemLines(der)}\n-----END ${label}-----\n`;

function derOf(c: Changed): Buffer {
  const base = BASES[c.base % BASES.length]!.der;
  const der = Buffer.from(base);
  for (const { at, value } of c.edits) der[at % der.length] = value;
  const cut = c.cut === null ? der : der.subarray(0, c.cut % der.length);
  return Buffer.concat([cut, Buffer.from(c.append)]);
}

function textOf(c: Changed): string {
  const der = derOf(c);
  switch (c.wrap) {
    case "pem":
      return block(der);
    case "crlf":
      return block(der).replace(/\n/g, "\r\n");
    case "one-line":
      return block(der).replace(/\n/g, "");
    case "two-blocks":
      return block(der) + block(der);
    case "other-label":
      return block(der, "NEW CERTIFICATE REQUEST");
    case "base64":
      return der.toString("base64");
    case "junk-around":
      return `subject=whatever\n${block(der)}trailing text\n`;
  }
}

const byte = fc.integer({ min: 0, max: 255 });
const changed: fc.Arbitrary<Changed> = fc.record({
  base: fc.nat(BASES.length - 1),
  edits: fc.array(fc.record({ at: fc.nat(), value: byte }), { maxLength: 3 }),
  cut: fc.option(fc.nat(), { freq: 5 }),
  append: fc.oneof(fc.constant<number[]>([]), fc.array(byte, { maxLength: 8 })),
  wrap: fc.oneof(fc.constant("pem" as const), fc.constantFrom(...WRAPS)),
});

const input: fc.Arbitrary<Input> = fc.oneof(
  { weight: 8, arbitrary: changed.map((c) => ({ changed: c })) },
  { weight: 1, arbitrary: hostileString.map((text) => ({ text })) },
);

const API_VERSION = "2026-09-01-preview";
const MAX_MESSAGE = 1024;

/** The frontend's answer to the text: the request, or the CloudError it throws. */
async function answer(text: string): Promise<string | CloudError | undefined> {
  try {
    return await requestedCsr({ body: { certificateSigningRequest: text }, apiVersion: API_VERSION });
  } catch (err) {
    if (err instanceof CloudError) return err;
    throw new Error(`threw ${err instanceof Error ? `${err.name}: ${err.message}` : typeof err}`, {
      cause: err,
    });
  }
}

fuzzTarget<Input>({
  name: "certificate-request",
  arbitrary: input,
  runs: 1500,
  async property(given) {
    const text = "text" in given ? given.text : textOf(given.changed);
    const got = await answer(text);
    if (got instanceof CloudError) {
      if ("changed" in given) {
        const c = given.changed;
        const base = BASES[c.base % BASES.length]!;
        const valid = base.signable && READABLE.includes(c.wrap) && derOf(c).equals(base.der);
        expect(valid, `refused a valid request (${base.what}): ${got.body.message}`).toBe(false);
      }
      expect(got.status).toBe(400);
      expect(got.body.code).toBe("InvalidRequestContent");
      expect(got.body.target).toBe("certificateSigningRequest");
      expect(got.body.message.length, got.body.message.slice(0, 200)).toBeLessThanOrEqual(MAX_MESSAGE);
      return;
    }
    expect(got).toBe(text);
    if ("text" in given) throw new Error("took a request made of no request openssl signed");
    const c = given.changed;
    const index = c.base % BASES.length;
    expect(BASES[index]!.signable, `took a request the signer refuses: ${BASES[index]!.what}`).toBe(true);
    // The signature covers the request's info; the rest is its algorithm and value, in DER.
    expect(derOf(c).equals(BASES[index]!.der), "took a request with bytes changed, cut or added").toBe(true);
  },
});
