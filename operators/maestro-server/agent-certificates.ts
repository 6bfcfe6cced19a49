/**
 * maestro-server's side of an agent's broker-certificate renewal (codec/broker-certificate.ts,
 * docs/decisions/0010-agent-certificate-renewal.md): it signs a request that names exactly the
 * consumer whose topic it came on, with the agents' client CA (the CA the broker trusts for
 * clients), for a bounded lifetime, at most once a minute per consumer. Everything else is
 * refused with an answer that says why, so the agent can log it.
 */
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type {
  BrokerCertificateAnswer,
  BrokerCertificateRequest,
} from "../cloudevents/codec/broker-certificate.ts";
import { parseCertificateRequest, subjectName, webKeys, type ParsedRequest } from "../hcp/pkcs10.ts";
import { signClientCertificate } from "../hcp/x509.ts";
import { errorMessage } from "../runtime/errors.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import { counter, metricsRegistry } from "../runtime/metrics.ts";

/** Default lifetime of an agent's certificate: 30 days. */
export const DEFAULT_AGENT_CERTIFICATE_LIFETIME_MS = 30 * 24 * 3_600_000;
/** A consumer is signed for at most this often by default. */
export const DEFAULT_MIN_INTERVAL_MS = 60_000;
/** NotBefore is backdated this much, for the agent's clock. */
const BACKDATE_MS = 5 * 60_000;

/** The reasons a request is refused, as metric labels (a bounded set). */
export type RefusalReason =
  "no-signer" | "ca-expired" | "malformed" | "key" | "wrong-subject" | "alt-names" | "too-soon";

/** RSA keys up to this size are signed (pkcs10.ts reads up to 16384 bits; a broker client needs no more). */
const MAX_RSA_BITS = 4096;

export interface AgentCertificateSignerOptions {
  /** PEM files of the agents' client CA: its certificate and its private key. */
  certFile: string;
  keyFile: string;
  /** Default DEFAULT_AGENT_CERTIFICATE_LIFETIME_MS. */
  lifetimeMs?: number;
  /** Default DEFAULT_MIN_INTERVAL_MS. */
  minIntervalMs?: number;
  now?: () => Date;
  log?: Logger;
}

function signerMetrics() {
  return {
    issued: counter(metricsRegistry, {
      name: "maestro_agent_certificates_issued_total",
      help: "Broker client certificates maestro-server signed for agents, by consumer",
      labelNames: ["consumer"] as const,
    }),
    refused: counter(metricsRegistry, {
      name: "maestro_agent_certificate_requests_refused_total",
      help: "Agents' broker certificate requests refused, by reason",
      labelNames: ["reason"] as const,
    }),
  };
}

const metrics = signerMetrics();

/** The refusal answer every request gets from a maestro-server that has no signer. */
export function noSignerAnswer(request: BrokerCertificateRequest): BrokerCertificateAnswer {
  metrics.refused.labels("no-signer").inc();
  return {
    consumer: request.consumer,
    requestId: request.requestId,
    refused:
      "this region does not renew agent certificates (maestro-server runs without --agent-certificate-signer-cert and --agent-certificate-signer-key)",
  };
}

class Refusal extends Error {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export class AgentCertificateSigner {
  readonly #ca: { pem: string; cert: X509Certificate; key: KeyObject };
  readonly #lifetimeMs: number;
  readonly #minIntervalMs: number;
  readonly #now: () => Date;
  readonly #log: Logger;
  readonly #lastIssuedMs = new Map<string, number>();

  constructor(opts: AgentCertificateSignerOptions) {
    let pem: string;
    let key: KeyObject;
    try {
      pem = readFileSync(opts.certFile, "utf8");
    } catch (err) {
      throw new Error(`--agent-certificate-signer-cert ${opts.certFile}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    try {
      key = createPrivateKey(readFileSync(opts.keyFile, "utf8"));
    } catch (err) {
      throw new Error(`--agent-certificate-signer-key ${opts.keyFile}: ${errorMessage(err)}`, { cause: err });
    }
    const cert = new X509Certificate(pem);
    if (!cert.ca) throw new Error(`--agent-certificate-signer-cert ${opts.certFile} is not a CA certificate`);
    if (!cert.checkPrivateKey(key))
      throw new Error(
        `--agent-certificate-signer-key ${opts.keyFile} is not the key of --agent-certificate-signer-cert ${opts.certFile}`,
      );
    webKeys(key); // throws for a key type this signer cannot sign with
    this.#ca = { pem, cert, key };
    this.#lifetimeMs = opts.lifetimeMs ?? DEFAULT_AGENT_CERTIFICATE_LIFETIME_MS;
    this.#minIntervalMs = opts.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
    this.#now = opts.now ?? (() => new Date());
    this.#log = (opts.log ?? silentLogger).child({ task: "agent-certificates" });
  }

  /** The answer to one request from `request.consumer`'s own topic: a certificate or a refusal. */
  async answer(request: BrokerCertificateRequest): Promise<BrokerCertificateAnswer> {
    const { consumer, requestId } = request;
    try {
      const now = this.#now();
      this.#checkInterval(consumer, now);
      const parsed = await this.#checked(request);
      const certificate = await this.#sign(parsed, consumer, now);
      this.#lastIssuedMs.set(consumer, now.getTime());
      const issued = new X509Certificate(certificate);
      metrics.issued.labels(consumer).inc();
      this.#log.info("Signed a broker client certificate for an agent", {
        consumer,
        serialNumber: issued.serialNumber.toLowerCase(),
        notAfter: new Date(issued.validTo).toISOString(),
      });
      return { consumer, requestId, certificate };
    } catch (err) {
      const reason: RefusalReason = err instanceof Refusal ? err.reason : "malformed";
      metrics.refused.labels(reason).inc();
      const refused = errorMessage(err);
      this.#log.info("Refused an agent's broker certificate request", { consumer, reason, refused });
      return { consumer, requestId, refused };
    }
  }

  #checkInterval(consumer: string, now: Date): void {
    const last = this.#lastIssuedMs.get(consumer);
    if (last === undefined || now.getTime() - last >= this.#minIntervalMs) return;
    const again = new Date(last + this.#minIntervalMs).toISOString();
    throw new Refusal(
      "too-soon",
      `a certificate was signed for ${consumer} less than ${this.#minIntervalMs / 1000}s ago; ask again after ${again}`,
    );
  }

  async #checked(request: BrokerCertificateRequest): Promise<ParsedRequest> {
    let parsed: ParsedRequest;
    try {
      parsed = await parseCertificateRequest(request.certificateSigningRequest);
    } catch (err) {
      // pkcs10.ts words every key it will not read as "unsupported key: …".
      const message = errorMessage(err);
      throw new Refusal(message.startsWith("unsupported key") ? "key" : "malformed", message);
    }
    const attrs = parsed.subjectAttributes;
    if (attrs.length !== 1 || attrs[0] !== "CN" || parsed.subject.commonName !== request.consumer)
      throw new Refusal(
        "wrong-subject",
        `the request's subject must be CN=${request.consumer} alone (the consumer whose topic it came on); it holds ${JSON.stringify(attrs.join(","))} with CN ${JSON.stringify(parsed.subject.commonName.slice(0, 80))}`,
      );
    const { dns, email, ip, uri, other } = parsed.altNames;
    if ([dns, email, ip, uri, other].some((names) => names.length > 0))
      throw new Refusal(
        "alt-names",
        "the request holds subjectAltNames; a broker client certificate has none",
      );
    const key = createPublicKey({
      key: Buffer.from(parsed.request.publicKey.rawData),
      format: "der",
      type: "spki",
    });
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (key.asymmetricKeyType === "rsa" && bits > MAX_RSA_BITS)
      throw new Refusal(
        "key",
        `unsupported key: RSA of ${bits} bits (want EC P-256 or RSA of 2048 to ${MAX_RSA_BITS} bits)`,
      );
    return parsed;
  }

  async #sign(parsed: ParsedRequest, consumer: string, now: Date): Promise<string> {
    const caEnd = Date.parse(this.#ca.cert.validTo);
    const notBefore = new Date(Math.max(now.getTime() - BACKDATE_MS, Date.parse(this.#ca.cert.validFrom)));
    const notAfter = new Date(Math.min(now.getTime() + this.#lifetimeMs, caEnd));
    if (notAfter.getTime() <= now.getTime())
      throw new Refusal("ca-expired", `the agents' client CA expired at ${this.#ca.cert.validTo}`);
    const rsa =
      createPublicKey({ key: Buffer.from(parsed.request.publicKey.rawData), format: "der", type: "spki" })
        .asymmetricKeyType === "rsa";
    return signClientCertificate(
      { certificate: this.#ca.pem, key: this.#ca.key },
      {
        subject: subjectName({ commonName: consumer }),
        publicKey: parsed.request.publicKey,
        notBefore,
        notAfter,
        keyEncipherment: rsa,
      },
    );
  }
}
