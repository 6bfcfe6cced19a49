/**
 * Where the agent's broker credentials live. Files (`--broker-ca/-cert/-key`) are how an agent
 * starts; with `--broker-credentials-secret` the agent keeps what it renews in that Secret on its
 * own management cluster (ca.crt, tls.crt, tls.key: the Secret the Deployment mounts), and reads it
 * first at every start, so a renewed certificate outlives a restart whether or not the kubelet has
 * refreshed the mounted files yet.
 */
import { readFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import type { BrokerCertificateSummary } from "../api/v1alpha1/managementcluster.ts";
import { SecretResource } from "../api/core.ts";
import { isConflict } from "../runtime/errors.ts";
import type { KubeClient, KubeObject } from "../runtime/kube.ts";

/** PEM text of the broker's CA, the client certificate and its key. */
export interface BrokerCredentials {
  ca: string;
  cert: string;
  key: string;
}

export const CA_KEY = "ca.crt";
export const CERT_KEY = "tls.crt";
export const KEY_KEY = "tls.key";

/** The serial number and validity of a PEM certificate; throws when it is no certificate. */
export function certificateSummary(pem: string): BrokerCertificateSummary {
  const cert = new X509Certificate(pem);
  return {
    serialNumber: cert.serialNumber.toLowerCase().replace(/^0+(?=.)/, ""),
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: new Date(cert.validTo).toISOString(),
  };
}

export function readCredentialFiles(files: {
  caFile: string;
  certFile: string;
  keyFile: string;
}): BrokerCredentials {
  return {
    ca: readFileSync(files.caFile, "utf8"),
    cert: readFileSync(files.certFile, "utf8"),
    key: readFileSync(files.keyFile, "utf8"),
  };
}

type SecretObject = KubeObject & { data?: Record<string, string>; type?: string };

const decode = (v: string | undefined): string | undefined =>
  v === undefined ? undefined : Buffer.from(v, "base64").toString("utf8");
const encode = (v: string): string => Buffer.from(v, "utf8").toString("base64");

/** The credentials Secret of one agent on its management cluster. */
export class CredentialsSecret {
  readonly #kube: Pick<KubeClient, "find" | "create" | "mergePatch">;
  readonly namespace: string;
  readonly name: string;

  constructor(kube: Pick<KubeClient, "find" | "create" | "mergePatch">, ref: string) {
    const [namespace, name, ...rest] = ref.split("/");
    if (!namespace || !name || rest.length > 0)
      throw new Error(`--broker-credentials-secret "${ref}" is not <namespace>/<name>`);
    this.#kube = kube;
    this.namespace = namespace;
    this.name = name;
  }

  get ref(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The credentials the Secret holds; undefined when it is absent or lacks a certificate or key. */
  async load(signal?: AbortSignal): Promise<BrokerCredentials | undefined> {
    const secret = await this.#kube.find<SecretObject>(SecretResource, this.name, this.namespace, { signal });
    const cert = decode(secret?.data?.[CERT_KEY]);
    const key = decode(secret?.data?.[KEY_KEY]);
    const ca = decode(secret?.data?.[CA_KEY]);
    return cert && key && ca ? { ca, cert, key } : undefined;
  }

  /**
   * Stores a renewed certificate and its key in one write, guarded by the resourceVersion read
   * (a lost race reads again), so the Secret never holds a certificate with another's key.
   */
  async save(creds: BrokerCredentials, signal?: AbortSignal): Promise<void> {
    const data = { [CA_KEY]: encode(creds.ca), [CERT_KEY]: encode(creds.cert), [KEY_KEY]: encode(creds.key) };
    for (let attempt = 0; ; attempt++) {
      const current = await this.#kube.find<SecretObject>(SecretResource, this.name, this.namespace, {
        signal,
      });
      try {
        // A merge patch carrying the resourceVersion read is refused (409) after any other write.
        if (current)
          await this.#kube.mergePatch(
            SecretResource,
            { name: this.name, namespace: this.namespace },
            { metadata: { resourceVersion: current.metadata.resourceVersion }, data },
            { signal },
          );
        else
          await this.#kube.create(
            SecretResource,
            {
              apiVersion: "v1",
              kind: "Secret",
              metadata: { name: this.name, namespace: this.namespace },
              type: "Opaque",
              data,
            },
            { signal },
          );
        return;
      } catch (err) {
        // 409: another write since the read (or a create that lost to one): read again.
        if (attempt >= 3 || !isConflict(err)) throw err;
      }
    }
  }
}
