import "reflect-metadata";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequest,
  X509CertificateGenerator,
} from "@peculiar/x509";
import { generateKeyPairSync, randomBytes, type KeyObject, type webcrypto } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BrokerCertificateSummary } from "../api/v1alpha1/index.ts";
import {
  BROKER_CERTIFICATE_REQUEST_TYPE,
  decodeBrokerCertificateRequest,
  encodeBrokerCertificateAnswer,
} from "../cloudevents/codec/broker-certificate.ts";
import type { CloudEvent } from "../cloudevents/types.ts";
import { subjectName, webKeys } from "../hcp/pkcs10.ts";
import { certificateSummary, type BrokerCredentials } from "./broker-credentials.ts";
import { CertificateRenewal, certificateProblem, renewalTime } from "./certificate-renewal.ts";

const HOUR = 3_600_000;
const serial = (): string => {
  const b = randomBytes(16);
  b[0] = (b[0] ?? 0) & 0x7f;
  return b.toString("hex");
};

interface TestCA {
  pem: string;
  key: KeyObject;
}

async function testCA(name = "broker-ca"): Promise<TestCA> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { algorithm, keys } = webKeys(privateKey);
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subjectName({ commonName: name }),
    notBefore: new Date(Date.now() - HOUR),
    notAfter: new Date(Date.now() + 1000 * HOUR),
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new BasicConstraintsExtension(true, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign, true),
    ],
  });
  return { pem: cert.toString("pem"), key: privateKey };
}

/** A client certificate from `ca` for `publicKey` (a CryptoKey or a request's), valid over [from, to]. */
async function issue(
  ca: TestCA,
  publicKey: webcrypto.CryptoKey | Pkcs10CertificateRequest["publicKey"],
  opts: { cn: string; from: Date; to: Date; usage?: string },
): Promise<string> {
  const { algorithm, keys } = webKeys(ca.key);
  const cert = await X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subjectName({ commonName: opts.cn }),
    issuer: new (await import("@peculiar/x509")).X509Certificate(ca.pem).subjectName,
    notBefore: opts.from,
    notAfter: opts.to,
    publicKey,
    signingKey: keys.privateKey,
    signingAlgorithm: algorithm,
    extensions: [new ExtendedKeyUsageExtension([opts.usage ?? ExtendedKeyUsage.clientAuth], false)],
  });
  return cert.toString("pem");
}

async function credentials(ca: TestCA, from: Date, to: Date): Promise<BrokerCredentials> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const cert = await issue(ca, webKeys(privateKey).keys.publicKey, { cn: "mgmt-1", from, to });
  return { ca: ca.pem, cert, key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
}

describe("renewalTime", () => {
  it("falls between 70% and 90% of the lifetime, the same for the same certificate", () => {
    for (let i = 0; i < 50; i++) {
      const cert: BrokerCertificateSummary = {
        serialNumber: serial(),
        notBefore: "2026-01-01T00:00:00.000Z",
        notAfter: "2026-01-31T00:00:00.000Z",
      };
      const at = renewalTime(cert).getTime();
      const from = Date.parse(cert.notBefore);
      const life = Date.parse(cert.notAfter) - from;
      expect(at).toBeGreaterThanOrEqual(from + 0.7 * life);
      expect(at).toBeLessThanOrEqual(from + 0.9 * life);
      expect(renewalTime(cert).getTime()).toBe(at);
    }
  });
});

describe("certificateProblem", () => {
  it("accepts the certificate for the key requested and refuses each other kind, saying why", async () => {
    const ca = await testCA();
    const other = await testCA("someone-else");
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pub = webKeys(privateKey).keys.publicKey;
    const now = new Date();
    const span = { from: new Date(now.getTime() - 60_000), to: new Date(now.getTime() + 24 * HOUR) };
    const check = (pem: string, current?: BrokerCertificateSummary): string | undefined =>
      certificateProblem(pem, { key: privateKey, consumer: "mgmt-1", ca: ca.pem, current, now });

    const good = await issue(ca, pub, { cn: "mgmt-1", ...span });
    expect(check(good)).toBeUndefined();
    expect(check("not a certificate")).toMatch(/not a PEM certificate/);
    const { privateKey: stranger } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    expect(check(await issue(ca, webKeys(stranger).keys.publicKey, { cn: "mgmt-1", ...span }))).toMatch(
      /public key is not the one requested/,
    );
    expect(check(await issue(ca, pub, { cn: "mgmt-2", ...span }))).toMatch(/not CN=mgmt-1/);
    expect(check(await issue(other, pub, { cn: "mgmt-1", ...span }))).toMatch(/no CA this agent trusts/);
    expect(
      check(await issue(ca, pub, { cn: "mgmt-1", ...span, usage: ExtendedKeyUsage.serverAuth })),
    ).toMatch(/not for client authentication/);
    expect(
      check(
        await issue(ca, pub, {
          cn: "mgmt-1",
          from: new Date(now.getTime() - 2 * HOUR),
          to: new Date(now.getTime() - HOUR),
        }),
      ),
    ).toMatch(/expired/);
    const longer = {
      serialNumber: "1",
      notBefore: now.toISOString(),
      notAfter: new Date(now.getTime() + 48 * HOUR).toISOString(),
    };
    expect(check(good, longer)).toMatch(/no later than the certificate in use/);
  });
});

/** A connection that hands requests to `answer` and records reconnects. */
function fakeConnection(answer: (request: CloudEvent) => Promise<CloudEvent | undefined>) {
  const handlers: Array<(e: CloudEvent) => void> = [];
  const reconnects: string[] = [];
  const dropped: string[] = [];
  const requests: CloudEvent[] = [];
  return {
    reconnects,
    dropped,
    requests,
    onEvent: (h: (e: CloudEvent, topic: string) => void): void => {
      handlers.push((e) => h(e, "sources/maestro/consumers/mgmt-1/sourceevents"));
    },
    onSubscribed: () => undefined,
    isConnected: () => true,
    reconnect: (reason: string) => (reconnects.push(reason), true),
    drop: (reason: string) => void dropped.push(reason),
    async publish(event: CloudEvent) {
      requests.push(event);
      const reply = await answer(event);
      if (reply) for (const h of handlers) h(reply);
    },
  };
}

function memorySecret(initial?: BrokerCredentials) {
  let stored = initial;
  const saves: BrokerCredentials[] = [];
  return {
    saves,
    ref: "maestro-agent/maestro-agent-broker",
    load: () => Promise.resolve(stored),
    save: (c: BrokerCredentials) => {
      stored = c;
      saves.push(c);
      return Promise.resolve();
    },
  };
}

/** Resolves once `cond` holds, checking after each turn of the event loop. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}

describe("CertificateRenewal", () => {
  it("renews a certificate past its renewal point: a new key, stored, then a reconnect with it", async () => {
    const ca = await testCA();
    const now = Date.now();
    // 95% of its lifetime gone: due at once.
    const old = await credentials(ca, new Date(now - 19 * HOUR), new Date(now + HOUR));
    const conn = fakeConnection(async (event) => {
      const req = decodeBrokerCertificateRequest(event);
      const csr = new Pkcs10CertificateRequest(req.certificateSigningRequest);
      const certificate = await issue(ca, csr.publicKey, {
        cn: "mgmt-1",
        from: new Date(now - 60_000),
        to: new Date(now + 30 * 24 * HOUR),
      });
      return encodeBrokerCertificateAnswer("maestro", {
        consumer: "mgmt-1",
        requestId: req.requestId,
        certificate,
      });
    });
    const secret = memorySecret(old);
    const renewal = new CertificateRenewal({
      consumer: "mgmt-1",
      agentId: "mgmt-1-work-agent",
      connection: conn,
      secret,
    });
    const stop = new AbortController();
    await renewal.load(stop.signal);
    expect(renewal.summary?.serialNumber).toBe(certificateSummary(old.cert).serialNumber);
    const running = renewal.run(stop.signal);
    await until(() => conn.reconnects.length === 1);
    stop.abort();
    await running;

    expect(conn.requests[0]?.type).toBe(BROKER_CERTIFICATE_REQUEST_TYPE);
    expect(secret.saves).toHaveLength(1);
    const saved = secret.saves[0]!;
    expect(saved.key).not.toBe(old.key);
    expect(saved.ca).toBe(old.ca);
    expect(renewal.credentials).toEqual(saved);
    expect(Date.parse(renewal.summary!.notAfter)).toBeGreaterThan(now + 29 * 24 * HOUR);
    expect(conn.reconnects).toEqual(["broker certificate renewed"]);
  });

  it("keeps the certificate in use when maestro-server refuses, and says nothing is stored", async () => {
    const ca = await testCA();
    const now = Date.now();
    const old = await credentials(ca, new Date(now - 19 * HOUR), new Date(now + HOUR));
    const conn = fakeConnection((event) => {
      const req = decodeBrokerCertificateRequest(event);
      return Promise.resolve(
        encodeBrokerCertificateAnswer("maestro", {
          consumer: "mgmt-1",
          requestId: req.requestId,
          refused: "no signer",
        }),
      );
    });
    const secret = memorySecret(old);
    const renewal = new CertificateRenewal({ consumer: "mgmt-1", agentId: "a", connection: conn, secret });
    const stop = new AbortController();
    await renewal.load(stop.signal);
    const running = renewal.run(stop.signal);
    await until(() => conn.requests.length === 1);
    stop.abort();
    await running;
    expect(secret.saves).toHaveLength(0);
    expect(conn.reconnects).toHaveLength(0);
    expect(renewal.credentials).toEqual(old);
  });

  it("ignores an answer to a request it did not make", async () => {
    const ca = await testCA();
    const now = Date.now();
    const old = await credentials(ca, new Date(now - 19 * HOUR), new Date(now + HOUR));
    const conn = fakeConnection(() =>
      Promise.resolve(
        encodeBrokerCertificateAnswer("maestro", {
          consumer: "mgmt-1",
          requestId: "someone-elses",
          refused: "x",
        }),
      ),
    );
    const renewal = new CertificateRenewal({
      consumer: "mgmt-1",
      agentId: "a",
      connection: conn,
      secret: memorySecret(old),
      answerTimeoutMs: 50,
    });
    const stop = new AbortController();
    await renewal.load(stop.signal);
    const running = renewal.run(stop.signal);
    await until(() => conn.dropped.length === 1);
    stop.abort();
    await running;
    expect(conn.dropped).toEqual(["stale-answer"]);
    expect(conn.reconnects).toHaveLength(0);
  });

  it("starts with the Secret's credentials, and with the files only while the Secret holds none", async () => {
    const ca = await testCA();
    const now = Date.now();
    const inSecret = await credentials(ca, new Date(now - HOUR), new Date(now + HOUR));
    const inFiles = await credentials(ca, new Date(now - HOUR), new Date(now + 10 * HOUR));
    const conn = fakeConnection(() => Promise.resolve(undefined));
    const dir = await mkdtemp(join(tmpdir(), "renewal-"));
    const files = {
      caFile: join(dir, "ca.crt"),
      certFile: join(dir, "tls.crt"),
      keyFile: join(dir, "tls.key"),
    };
    await writeFile(files.caFile, inFiles.ca);
    await writeFile(files.certFile, inFiles.cert);
    await writeFile(files.keyFile, inFiles.key);
    const start = async (
      secret: ReturnType<typeof memorySecret>,
      withFiles = true,
    ): Promise<CertificateRenewal> => {
      const r = new CertificateRenewal({
        consumer: "mgmt-1",
        agentId: "a",
        connection: conn,
        secret,
        ...(withFiles ? { files } : {}),
      });
      await r.load(new AbortController().signal);
      return r;
    };
    expect((await start(memorySecret(inSecret))).credentials.cert).toBe(inSecret.cert);
    expect((await start(memorySecret())).credentials.cert).toBe(inFiles.cert);
    await expect(start(memorySecret(), false)).rejects.toThrow(/holds no certificate and key/);
  });
});
