/**
 * Each cluster's OIDC issuer, as ARO HCP has it: the issuer URL is the region's Front Door base
 * URL, then the tenant and the cluster ID (`<base>/<tenantId>/<clusterID>`); behind it the
 * region's storage account holds, under the same path, the discovery document
 * (`.well-known/openid-configuration`) and the JWKS (`openid/v1/jwks`) of the cluster's
 * service-account signing key. The HostedCluster gets the URL as spec.issuerURL and the key as
 * spec.serviceAccountSigningKey, so the tokens its kube-apiserver signs verify against what Entra
 * ID reads there (workload identity).
 *
 * The key is stored before anything uses it (a Secret in the operators' namespace, named after the
 * cluster's uid) and read back from there ever after: a crash between making a key and storing it
 * loses only a key nobody saw, and a stored key is never replaced while the cluster exists.
 */
import { createHash, createPublicKey, generateKeyPair, type JsonWebKey } from "node:crypto";
import { promisify } from "node:util";
import { SecretResource } from "../api/core.ts";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { BlobStoreError, type BlobStore } from "../azure/index.ts";
import type { StepState } from "../hcp/steps.ts";
import { isApiError, type KubeClient, type KubeObject } from "../runtime/kube.ts";
import type { InfraOptions, InfraResult } from "./infrastructure.ts";

const generateRsaKeyPair = promisify(generateKeyPair);

/** HyperShift reads the signing key from this key of the Secret spec.serviceAccountSigningKey names. */
export const SIGNING_KEY_SECRET_KEY = "key";
export const DISCOVERY_PATH = ".well-known/openid-configuration";
export const JWKS_PATH = "openid/v1/jwks";
/** What Entra ID accepts from a federated issuer, and what kube-apiserver signs with an RSA key. */
const SIGNING_ALGORITHM = "RS256";
const RSA_BITS = 2048;

/** The cluster's path under the issuer base: `<tenantId>/<clusterID>`; the cluster ID alone without a tenant. */
export function issuerPath(cluster: HcpCluster): string {
  const tenant = cluster.spec.platform.azure.tenantId;
  const id = cluster.metadata.uid ?? "";
  return tenant ? `${tenant.toLowerCase()}/${id}` : id;
}

export function issuerURL(baseURL: string, cluster: HcpCluster): string {
  return `${baseURL.replace(/\/+$/, "")}/${issuerPath(cluster)}`;
}

/** The two documents a verifier reads, serialized exactly as they are published. */
export interface IssuerDocuments {
  discovery: string;
  jwks: string;
}

/**
 * kube-apiserver's key ID for a public key: the SHA-256 of its DER (PKIX) encoding, base64url; the
 * tokens it signs carry this `kid`, so the JWKS must name the key the same way.
 */
export function keyId(publicKeyPem: string): string {
  const der = createPublicKey(publicKeyPem).export({ format: "der", type: "spki" });
  return createHash("sha256").update(der).digest("base64url");
}

/** The public half of a PEM private key as an RFC 7517 JWK for signature checks. */
export function publicJwk(privateKeyPem: string): JsonWebKey {
  const pub = createPublicKey(privateKeyPem);
  const jwk = pub.export({ format: "jwk" });
  const pem = pub.export({ format: "pem", type: "spki" }).toString();
  return { use: "sig", kty: jwk.kty, kid: keyId(pem), alg: SIGNING_ALGORITHM, n: jwk.n, e: jwk.e };
}

export function issuerDocuments(url: string, privateKeyPem: string): IssuerDocuments {
  const discovery = {
    issuer: url,
    jwks_uri: `${url}/${JWKS_PATH}`,
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
  };
  return {
    discovery: JSON.stringify(discovery),
    jwks: JSON.stringify({ keys: [publicJwk(privateKeyPem)] }),
  };
}

/** A new RSA signing key, PKCS#1 PEM (what kube-apiserver's --service-account-signing-key-file reads). */
export async function newSigningKey(): Promise<string> {
  const { privateKey } = await generateRsaKeyPair("rsa", {
    modulusLength: RSA_BITS,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return privateKey;
}

/** The cluster a signing key belongs to. */
export interface KeyOwner {
  uid: string;
  /** namespace/name, for humans reading the Secret. */
  name: string;
}

/** Where signing keys are kept: one per cluster, made once, read back ever after. */
export interface SigningKeyStore {
  /** The cluster's key (PEM), made and stored first if it has none. */
  ensure(owner: KeyOwner, opts?: InfraOptions): Promise<string>;
  /** Removes the cluster's key; resolves false when there was none. */
  remove(owner: KeyOwner, opts?: InfraOptions): Promise<boolean>;
}

export const SIGNING_KEY_LABEL = "hcp.aro.dev/signing-key-of";

/**
 * Signing keys as Secrets `sa-signing-key-<uid>` in one namespace (the operators'): RBAC there
 * only, and a name no other cluster can take. Create, never update: two writers racing both end
 * up with whichever key the apiserver stored first. Keys read are remembered per uid until
 * removed, so a reconcile costs no read. `prime` reads them all at once on a start, so that a
 * restart's resync is not a GET per cluster, nor a new cluster a GET that finds nothing.
 */
export class SecretSigningKeys implements SigningKeyStore {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #known = new Map<string, string>();
  /** Every key stored when prime listed them is known: one not known is created (a 409 reads it). */
  #primed = false;

  constructor(client: KubeClient, namespace: string) {
    this.#client = client;
    this.#namespace = namespace;
  }

  async ensure(owner: KeyOwner, opts: InfraOptions = {}): Promise<string> {
    const known = this.#known.get(owner.uid);
    if (known) return known;
    const stored = this.#primed ? undefined : await this.#read(owner, opts);
    const key = stored ?? (await this.#create(owner, opts));
    this.#known.set(owner.uid, key);
    return key;
  }

  /**
   * Reads every stored key in pages of 500, each page dropped once its keys are taken (10,000
   * Secrets at once would be a heap spike in a restart). A Secret without its key is left out, so
   * its cluster's reconcile reads it and reports it. Resolves how many keys are known.
   */
  async prime(opts: InfraOptions = {}): Promise<number> {
    let next: string | undefined;
    do {
      const page = await this.#client.list<KubeObject & { data?: Record<string, string> }>(SecretResource, {
        namespace: this.#namespace,
        labelSelector: SIGNING_KEY_LABEL,
        limit: 500,
        continue: next,
        signal: opts.signal,
      });
      for (const secret of page.items) this.#remember(secret);
      next = page.metadata.continue;
    } while (next);
    this.#primed = true;
    return this.#known.size;
  }

  #remember(secret: KubeObject & { data?: Record<string, string> }): void {
    const uid = secret.metadata.labels?.[SIGNING_KEY_LABEL];
    const data = secret.data?.[SIGNING_KEY_SECRET_KEY];
    if (uid && data && secret.metadata.name === secretName({ uid, name: "" }))
      this.#known.set(uid, Buffer.from(data, "base64").toString("utf8"));
  }

  async remove(owner: KeyOwner, opts: InfraOptions = {}): Promise<boolean> {
    this.#known.delete(owner.uid);
    return this.#client.delete(SecretResource, { name: secretName(owner), namespace: this.#namespace }, opts);
  }

  async #read(owner: KeyOwner, opts: InfraOptions): Promise<string | undefined> {
    const secret = await this.#client.find<KubeObject & { data?: Record<string, string> }>(
      SecretResource,
      secretName(owner),
      this.#namespace,
      opts,
    );
    const data = secret?.data?.[SIGNING_KEY_SECRET_KEY];
    if (!secret) return undefined;
    if (!data)
      throw new Error(`Secret ${this.#namespace}/${secretName(owner)} has no ${SIGNING_KEY_SECRET_KEY}`);
    return Buffer.from(data, "base64").toString("utf8");
  }

  async #create(owner: KeyOwner, opts: InfraOptions): Promise<string> {
    const key = await newSigningKey();
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: secretName(owner),
        namespace: this.#namespace,
        labels: { [SIGNING_KEY_LABEL]: owner.uid },
        annotations: { "hcp.aro.dev/cluster": owner.name },
      },
      type: "Opaque",
      data: { [SIGNING_KEY_SECRET_KEY]: Buffer.from(key).toString("base64") },
    };
    try {
      await this.#client.create(SecretResource, secret, opts);
      return key;
    } catch (err) {
      // Another writer stored one first: that one is the cluster's key.
      if (!isApiError(err, 409)) throw err;
      const stored = await this.#read(owner, opts);
      if (!stored) throw err;
      return stored;
    }
  }
}

function secretName(owner: KeyOwner): string {
  return `sa-signing-key-${owner.uid}`;
}

/** Publishes and removes a cluster's issuer documents. */
export interface IssuerDocumentStore {
  /** Where the documents go, for messages. */
  readonly location: string;
  /** Writes each document whose published content differs. Ready once both are there. */
  publish(path: string, docs: IssuerDocuments, opts?: InfraOptions): Promise<InfraResult>;
  /** Removes both documents. Ready once neither is there. */
  unpublish(path: string, opts?: InfraOptions): Promise<InfraResult>;
}

/** The issuer documents as blobs of one container (ARO HCP: the OIDC storage account's `$web`). */
export class BlobIssuerDocuments implements IssuerDocumentStore {
  readonly #store: BlobStore;

  constructor(store: BlobStore) {
    this.#store = store;
  }

  get location(): string {
    return this.#store.location;
  }

  async publish(path: string, docs: IssuerDocuments, opts: InfraOptions = {}): Promise<InfraResult> {
    return this.#guard("publish", async () => {
      for (const [name, body] of blobs(path, docs)) {
        if ((await this.#store.read(name, opts)) === body) continue;
        await this.#store.write(name, body, "application/json", opts);
      }
      // The same words whether this look wrote or found them: a status that says which would be
      // rewritten by every recheck and restart for nothing a user could act on.
      return {
        state: "ready",
        reason: "Published",
        message: `The discovery document and JWKS are published at ${this.location}/${path}`,
      };
    });
  }

  async unpublish(path: string, opts: InfraOptions = {}): Promise<InfraResult> {
    return this.#guard("remove", async () => {
      for (const [name] of blobs(path)) await this.#store.remove(name, opts);
      return {
        state: "ready",
        reason: "Removed",
        message: `Nothing is published at ${this.location}/${path}`,
      };
    });
  }

  /** A storage failure as a retryable step; anything else (a bug, an abort) is thrown. */
  async #guard(verb: string, run: () => Promise<StepState>): Promise<InfraResult> {
    try {
      return { step: await run() };
    } catch (err) {
      if (!(err instanceof BlobStoreError)) throw err;
      return {
        step: {
          state: "failed",
          reason: err.status === 0 ? "StorageUnreachable" : "StorageError",
          message: `Could not ${verb} the OIDC documents: ${err.message}`,
          userActionRequired: false,
        },
      };
    }
  }
}

function blobs(path: string, docs?: IssuerDocuments): Array<[string, string]> {
  return [
    [`${path}/${DISCOVERY_PATH}`, docs?.discovery ?? ""],
    [`${path}/${JWKS_PATH}`, docs?.jwks ?? ""],
  ];
}

/** What the cluster controller needs for the issuers: the base URL, the keys, the documents' store. */
export interface ClusterOidc {
  /** `https://<Front Door endpoint>/`: every issuer URL starts with it. */
  issuerBaseURL: string;
  keys: SigningKeyStore;
  documents: IssuerDocumentStore;
}
