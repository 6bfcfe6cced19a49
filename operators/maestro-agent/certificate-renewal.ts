/**
 * The agent renews its own broker client certificate, as kubelet renews its client certificate:
 * once the certificate in use is 70–90% through its lifetime (the point fixed per certificate, so
 * a restart keeps it), it makes a new EC P-256 key, sends maestro-server a PKCS#10 request for its
 * consumer name on its own topic (codec/broker-certificate.ts), checks the certificate that comes
 * back (its key, its name, its issuer, its dates), stores key and certificate in one write of its
 * credentials Secret, and reconnects with them. The private key never leaves this process and its
 * management cluster. The reconnect is an ordinary one: the agent's spec resync and the statuses
 * it had not sent yet repair whatever the broker dropped in between, so no work or status is lost.
 * Why: docs/decisions/0010-agent-certificate-renewal.md.
 */
import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  X509Certificate,
  type KeyObject,
} from "node:crypto";
import type { BrokerCertificateSummary } from "../api/v1alpha1/managementcluster.ts";
import type { Connection } from "../cloudevents/client/connection.ts";
import {
  BROKER_CERTIFICATE_ANSWER_TYPE,
  decodeBrokerCertificateAnswer,
  encodeBrokerCertificateRequest,
  type BrokerCertificateAnswer,
} from "../cloudevents/codec/broker-certificate.ts";
import type { CloudEvent } from "../cloudevents/types.ts";
import { Backoff, sleep } from "../runtime/backoff.ts";
import { errorMessage } from "../runtime/errors.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import { counter, gauge, metricsRegistry } from "../runtime/metrics.ts";
import {
  certificateSummary,
  readCredentialFiles,
  type BrokerCredentials,
  type CredentialsSecret,
} from "./broker-credentials.ts";

/** The share of a certificate's lifetime after which it is renewed: kubelet's 70%, plus up to 20%. */
export const RENEW_FROM = 0.7;
export const RENEW_JITTER = 0.2;
/** The clientAuth extended key usage. */
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
/** A certificate may start this far in our future (clock skew between the agent and the signer). */
const SKEW_MS = 5 * 60_000;

/**
 * When a certificate is renewed: between 70% and 90% of its lifetime, at a point taken from its
 * serial number, so that agents issued together do not all ask at once and a restart asks when
 * the process before it would have.
 */
export function renewalTime(cert: BrokerCertificateSummary): Date {
  const from = Date.parse(cert.notBefore);
  const lifetime = Date.parse(cert.notAfter) - from;
  const spread = (createHash("sha256").update(cert.serialNumber).digest()[0] ?? 0) / 255;
  return new Date(from + lifetime * (RENEW_FROM + RENEW_JITTER * spread));
}

function pemBlocks(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/**
 * Why `pem` is not a certificate this agent may switch to, or undefined when it is: its public key
 * is the key just made, its subject is CN=<consumer> alone, one of the CAs the agent trusts issued
 * and signed it, it is for client authentication, and it is valid now and lasts longer than `current`.
 */
export function certificateProblem(
  pem: string,
  opts: { key: KeyObject; consumer: string; ca: string; current?: BrokerCertificateSummary; now: Date },
): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch (err) {
    return `the answer is not a PEM certificate (${errorMessage(err).slice(0, 100)})`;
  }
  if (!cert.publicKey.equals(createPublicKey(opts.key))) return "its public key is not the one requested";
  if (cert.subject !== `CN=${opts.consumer}`)
    return `its subject is ${JSON.stringify(cert.subject.slice(0, 200))}, not CN=${opts.consumer}`;
  const issuers = pemBlocks(opts.ca).map((b) => new X509Certificate(b));
  if (!issuers.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey)))
    return "no CA this agent trusts for the broker issued it";
  if (!(cert.keyUsage ?? []).includes(CLIENT_AUTH)) return "it is not for client authentication";
  const now = opts.now.getTime();
  if (Date.parse(cert.validFrom) > now + SKEW_MS) return `it is not valid before ${cert.validFrom}`;
  if (Date.parse(cert.validTo) <= now) return `it expired at ${cert.validTo}`;
  if (opts.current && Date.parse(cert.validTo) <= Date.parse(opts.current.notAfter))
    return `it expires (${cert.validTo}) no later than the certificate in use`;
  return undefined;
}

function renewalMetrics() {
  return {
    expiry: gauge(metricsRegistry, {
      name: "maestro_agent_broker_certificate_expiry_timestamp_seconds",
      help: "When the broker client certificate the agent uses expires (seconds since the epoch)",
      labelNames: ["consumer"] as const,
    }),
    renewals: counter(metricsRegistry, {
      name: "maestro_agent_broker_certificate_renewals_total",
      help: "Broker client certificate renewals, by result (renewed, refused, timeout, invalid, error)",
      labelNames: ["consumer", "result"] as const,
    }),
  };
}

export interface CertificateRenewalOptions {
  consumer: string;
  agentId: string;
  connection: Pick<Connection, "publish" | "onEvent" | "onSubscribed" | "isConnected" | "reconnect" | "drop">;
  /** Where renewed credentials are kept; without it the agent cannot renew (files only). */
  secret?: Pick<CredentialsSecret, "load" | "save" | "ref">;
  /** The credentials an agent starts with when the Secret holds none or older ones. */
  files?: { caFile: string; certFile: string; keyFile: string };
  /** How long to wait for maestro-server's answer. Default 30 s. */
  answerTimeoutMs?: number;
  /** How often the Secret is read again for credentials written by someone else. Default 5 min. */
  refreshMs?: number;
  now?: () => Date;
  log?: Logger;
}

export class CertificateRenewal {
  readonly #o: CertificateRenewalOptions;
  readonly #log: Logger;
  readonly #metrics = renewalMetrics();
  #current: BrokerCredentials | undefined;
  #summary: BrokerCertificateSummary | undefined;
  #pending: { requestId: string; resolve: (a: BrokerCertificateAnswer) => void } | undefined;
  #wake: (() => void) | undefined;

  constructor(opts: CertificateRenewalOptions) {
    this.#o = opts;
    this.#log = (opts.log ?? silentLogger).child({ task: "broker-certificate" });
    opts.connection.onEvent((event) => this.#answered(event));
    opts.connection.onSubscribed(() => this.#wake?.());
  }

  /** The credentials to connect with now; load() first. */
  get credentials(): BrokerCredentials {
    if (!this.#current) throw new Error("the broker credentials are not loaded yet");
    return this.#current;
  }

  /**
   * The credentials to start with: the Secret's, where the agent keeps what it renews, and the
   * files only while the Secret holds none (a new agent). The Secret is read until it can be
   * (nothing works without the management cluster's apiserver anyway).
   */
  async load(signal: AbortSignal): Promise<void> {
    let stored: BrokerCredentials | undefined;
    const backoff = new Backoff({ initialMs: 1000, maxMs: 30_000 });
    while (this.#o.secret && !signal.aborted) {
      try {
        stored = await this.#o.secret.load(signal);
        break;
      } catch (err) {
        this.#log.info("Could not read the credentials Secret; trying again", { err: errorMessage(err) });
        await sleep(backoff.next(), signal);
      }
    }
    const chosen = stored ?? (this.#o.files ? readCredentialFiles(this.#o.files) : undefined);
    if (!chosen)
      throw new Error(
        `the credentials Secret ${this.#o.secret?.ref ?? ""} holds no certificate and key, and no --broker-cert/--broker-key were given`,
      );
    this.#current = chosen;
    this.#adopted(chosen);
    if (this.#summary && Date.parse(this.#summary.notAfter) <= this.#now().getTime())
      this.#log.error(
        "The broker client certificate has expired: issue a new one into the credentials Secret",
        undefined,
        {
          notAfter: this.#summary.notAfter,
          secret: this.#o.secret?.ref,
        },
      );
  }

  /** The certificate in use, as the heartbeat reports it; undefined when it cannot be read. */
  get summary(): BrokerCertificateSummary | undefined {
    return this.#summary;
  }

  #now(): Date {
    return (this.#o.now ?? (() => new Date()))();
  }

  #adopted(creds: BrokerCredentials): void {
    try {
      this.#summary = certificateSummary(creds.cert);
      this.#metrics.expiry.labels(this.#o.consumer).set(Date.parse(this.#summary.notAfter) / 1000);
    } catch (err) {
      this.#summary = undefined;
      this.#log.error("The broker client certificate cannot be read", err);
    }
  }

  /** Renews whenever the certificate in use is due, until the signal aborts. Never throws. */
  async run(signal: AbortSignal): Promise<void> {
    if (!this.#o.secret) {
      this.#log.info("No --broker-credentials-secret: the broker certificate is not renewed by the agent");
      return;
    }
    const backoff = new Backoff({ initialMs: 30_000, maxMs: 600_000, resetAfterMs: Number.MAX_SAFE_INTEGER });
    let nextRefresh = 0;
    while (!signal.aborted) {
      const now = this.#now().getTime();
      if (now >= nextRefresh) {
        await this.#refreshFromSecret(signal);
        nextRefresh = now + (this.#o.refreshMs ?? 300_000);
      }
      const due = this.#summary ? renewalTime(this.#summary).getTime() : now;
      if (due > now || !this.#o.connection.isConnected()) {
        await this.#pause(Math.min(Math.max(due - now, 1000), nextRefresh - now), signal);
        continue;
      }
      if (await this.#renew(signal)) backoff.reset();
      else await sleep(backoff.next(), signal);
    }
  }

  /** Waits up to `ms`, or until the connection subscribes again. */
  #pause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = () => resolve();
      void sleep(Math.max(ms, 0), signal).then(resolve);
    }).then(() => {
      this.#wake = undefined;
    });
  }

  /** Adopts credentials someone else wrote to the Secret (an SRE after an expiry) when they last longer. */
  async #refreshFromSecret(signal: AbortSignal): Promise<void> {
    try {
      const stored = await this.#o.secret?.load(signal);
      if (!stored || stored.cert === this.#current?.cert) return;
      const later = certificateSummary(stored.cert);
      if (this.#summary && Date.parse(later.notAfter) <= Date.parse(this.#summary.notAfter)) return;
      this.#switch(stored, "the credentials Secret holds a newer certificate");
    } catch (err) {
      if (!signal.aborted)
        this.#log.info("Could not read the credentials Secret", { err: errorMessage(err) });
    }
  }

  #switch(creds: BrokerCredentials, reason: string): void {
    this.#current = creds;
    this.#adopted(creds);
    this.#log.info("Switching the broker client certificate", {
      reason,
      serialNumber: this.#summary?.serialNumber,
      notAfter: this.#summary?.notAfter,
    });
    this.#o.connection.reconnect(reason);
  }

  /** One request, answer, check, store and switch. Resolves whether the certificate was renewed. */
  async #renew(signal: AbortSignal): Promise<boolean> {
    const { consumer } = this.#o;
    const count = (result: string): void => this.#metrics.renewals.labels(consumer, result).inc();
    try {
      // Loaded at the first renewal, not at start: @peculiar/x509 and its ASN.1 stack are ~10 MB
      // of the agent's resident memory, for a request made once per certificate lifetime.
      const { certificateRequest } = await import("../hcp/pkcs10.ts");
      const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const request = encodeBrokerCertificateRequest(
        this.#o.agentId,
        consumer,
        await certificateRequest(privateKey, { commonName: consumer }),
      );
      const answer = this.#answerTo(String((request.data as { requestId: string }).requestId), signal);
      await this.#o.connection.publish(request);
      this.#log.info("Asked maestro-server for a new broker client certificate", {
        renewalTime: this.#summary && renewalTime(this.#summary).toISOString(),
        notAfter: this.#summary?.notAfter,
      });
      const got = await answer;
      if (!got) return (count("timeout"), false);
      if ("refused" in got) {
        this.#log.error("maestro-server refused to renew the broker certificate", undefined, {
          reason: got.refused,
        });
        return (count("refused"), false);
      }
      const ca = this.credentials.ca;
      const problem = certificateProblem(got.certificate, {
        key: privateKey,
        consumer,
        ca,
        current: this.#summary,
        now: this.#now(),
      });
      if (problem) {
        this.#log.error("The renewed broker certificate is not usable", undefined, { problem });
        return (count("invalid"), false);
      }
      const renewed = {
        ca,
        cert: got.certificate,
        key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      };
      // Stored before it is used: a crash after this reconnects with it at the next start.
      await this.#o.secret?.save(renewed, signal);
      count("renewed");
      this.#switch(renewed, "broker certificate renewed");
      return true;
    } catch (err) {
      if (!signal.aborted) this.#log.error("Broker certificate renewal failed", err);
      count("error");
      return false;
    } finally {
      this.#pending = undefined;
    }
  }

  /** The answer to `requestId`, or undefined after the timeout. */
  #answerTo(requestId: string, signal: AbortSignal): Promise<BrokerCertificateAnswer | undefined> {
    return new Promise((resolve) => {
      this.#pending = { requestId, resolve };
      void sleep(this.#o.answerTimeoutMs ?? 30_000, signal).then(() => resolve(undefined));
    });
  }

  #answered(event: CloudEvent): void {
    if (event.type !== BROKER_CERTIFICATE_ANSWER_TYPE) return;
    try {
      const answer = decodeBrokerCertificateAnswer(event);
      if (answer.consumer !== this.#o.consumer)
        return this.#o.connection.drop("consumer-mismatch", answer.consumer, event);
      if (answer.requestId !== this.#pending?.requestId)
        return this.#o.connection.drop("stale-answer", `request ${answer.requestId} is not pending`, event);
      this.#pending.resolve(answer);
    } catch (err) {
      this.#o.connection.drop("invalid", err, event);
    }
  }
}
