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
 * loses only a key nobody saw. Only a rotation (signing-key-rotation.ts) changes a stored key,
 * and the JWKS then holds every key that must verify (signing-keyring.ts).
 */
import { generateKeyPair } from "node:crypto";
import { promisify } from "node:util";
import { SecretResource } from "../api/core.ts";
import { originalUid, type HcpCluster } from "../api/v1alpha1/index.ts";
import { BlobStoreError, type BlobStore } from "../azure/index.ts";
import type { StepState } from "../hcp/steps.ts";
import { isApiError, type KubeClient, type KubeObject } from "../runtime/kube.ts";
import type { InfraOptions, InfraResult } from "./infrastructure.ts";
import {
  keyringFromSecretData,
  keyringToSecretData,
  publishedJwks,
  SIGNING_ALGORITHM,
  SIGNING_KEY_SECRET_KEY,
  type SigningKeyring,
} from "./signing-keyring.ts";

const generateRsaKeyPair = promisify(generateKeyPair);

export const DISCOVERY_PATH = ".well-known/openid-configuration";
export const JWKS_PATH = "openid/v1/jwks";
const RSA_BITS = 2048;

/** The cluster's path under the issuer base: `<tenantId>/<clusterID>`; the cluster ID alone without a tenant. */
export function issuerPath(cluster: HcpCluster): string {
  const tenant = cluster.spec.platform.azure.tenantId;
  const id = originalUid(cluster);
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

/** The documents at `now`: the JWKS holds every key of the ring that must verify then (publishedJwks). */
export function issuerDocuments(url: string, ring: SigningKeyring, now: number): IssuerDocuments {
  const discovery = {
    issuer: url,
    jwks_uri: `${url}/${JWKS_PATH}`,
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
  };
  return {
    discovery: JSON.stringify(discovery),
    jwks: JSON.stringify({ keys: publishedJwks(ring, now) }),
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

/** Where signing keys are kept: one keyring per cluster, made once, changed only by a rotation. */
export interface SigningKeyStore {
  /** The cluster's keyring, its active key made and stored first if it has none. */
  ensure(owner: KeyOwner, opts?: InfraOptions): Promise<SigningKeyring>;
  /** Removes the cluster's keys; resolves false when there were none. */
  remove(owner: KeyOwner, opts?: InfraOptions): Promise<boolean>;
}

/** A stored keyring and the version a replacement must name (the Secret's resourceVersion). */
export interface StoredKeyring {
  ring: SigningKeyring;
  version: string;
}

/** Reads and replaces keyrings with optimistic concurrency, for the rotation's steps. */
export interface KeyringStore {
  /** The stored keyring as it is now (no cache); undefined when the cluster has none. */
  read(owner: KeyOwner, opts?: InfraOptions): Promise<StoredKeyring | undefined>;
  /** Stores `ring` if the stored one is still at `version`; false when another write came first. */
  replace(owner: KeyOwner, ring: SigningKeyring, version: string, opts?: InfraOptions): Promise<boolean>;
}

export const SIGNING_KEY_LABEL = "hcp.aro.dev/signing-key-of";

type SecretObject = KubeObject & { data?: Record<string, string>; type?: string };

/**
 * Signing keys as Secrets `sa-signing-key-<uid>` in one namespace (the operators'): RBAC there
 * only, and a name no other cluster can take. Created once: two writers racing both end up with
 * whichever key the apiserver stored first; after that only `replace` (a rotation's step, guarded
 * by the resourceVersion) changes it. Keyrings read or written are remembered per uid until
 * removed, so a reconcile costs no read. `prime` reads them all at once on a start, so that a
 * restart's resync is not a GET per cluster, nor a new cluster a GET that finds nothing.
 */
export class SecretSigningKeys implements SigningKeyStore, KeyringStore {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #known = new Map<string, SigningKeyring>();
  /** Every key stored when prime listed them is known: one not known is created (a 409 reads it). */
  #primed = false;

  constructor(client: KubeClient, namespace: string) {
    this.#client = client;
    this.#namespace = namespace;
  }

  async ensure(owner: KeyOwner, opts: InfraOptions = {}): Promise<SigningKeyring> {
    const known = this.#known.get(owner.uid);
    if (known) return known;
    const stored = this.#primed ? undefined : (await this.read(owner, opts))?.ring;
    const ring = stored ?? (await this.#create(owner, opts));
    this.#known.set(owner.uid, ring);
    return ring;
  }

  /**
   * Reads every stored key in pages of 500, each page dropped once its keys are taken (10,000
   * Secrets at once would be a heap spike in a restart). A Secret without its key is left out, so
   * its cluster's reconcile reads it and reports it. Resolves how many keys are known.
   */
  async prime(opts: InfraOptions = {}): Promise<number> {
    let next: string | undefined;
    do {
      const page = await this.#client.list<SecretObject>(SecretResource, {
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

  #remember(secret: SecretObject): void {
    const uid = secret.metadata.labels?.[SIGNING_KEY_LABEL];
    const ring = keyringFromSecretData(secret.data);
    if (uid && ring && secret.metadata.name === secretName({ uid, name: "" })) this.#known.set(uid, ring);
  }

  async remove(owner: KeyOwner, opts: InfraOptions = {}): Promise<boolean> {
    this.#known.delete(owner.uid);
    return this.#client.delete(SecretResource, { name: secretName(owner), namespace: this.#namespace }, opts);
  }

  async read(owner: KeyOwner, opts: InfraOptions = {}): Promise<StoredKeyring | undefined> {
    const secret = await this.#client.find<SecretObject>(
      SecretResource,
      secretName(owner),
      this.#namespace,
      opts,
    );
    if (!secret) return undefined;
    const ring = keyringFromSecretData(secret.data);
    if (!ring)
      throw new Error(`Secret ${this.#namespace}/${secretName(owner)} has no ${SIGNING_KEY_SECRET_KEY}`);
    this.#known.set(owner.uid, ring);
    return { ring, version: secret.metadata.resourceVersion ?? "" };
  }

  async replace(
    owner: KeyOwner,
    ring: SigningKeyring,
    version: string,
    opts: InfraOptions = {},
  ): Promise<boolean> {
    const secret = this.#secret(owner, ring);
    secret.metadata.resourceVersion = version;
    try {
      await this.#client.replace(SecretResource, secret, undefined, opts);
    } catch (err) {
      if (isApiError(err, 409)) return false;
      throw err;
    }
    this.#known.set(owner.uid, ring);
    return true;
  }

  #secret(owner: KeyOwner, ring: SigningKeyring): SecretObject {
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: secretName(owner),
        namespace: this.#namespace,
        labels: { [SIGNING_KEY_LABEL]: owner.uid },
        annotations: { "hcp.aro.dev/cluster": owner.name },
      },
      type: "Opaque",
      data: keyringToSecretData(ring),
    };
  }

  async #create(owner: KeyOwner, opts: InfraOptions): Promise<SigningKeyring> {
    const ring: SigningKeyring = { active: await newSigningKey(), retired: [] };
    try {
      await this.#client.create(SecretResource, this.#secret(owner, ring), opts);
      return ring;
    } catch (err) {
      // Another writer stored one first: that one is the cluster's key.
      if (!isApiError(err, 409)) throw err;
      const stored = await this.read(owner, opts);
      if (!stored) throw err;
      return stored.ring;
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
  /**
   * Writes each document whose published content differs (with `createFirst`, each document
   * without reading it first). Ready once both are there.
   */
  publish(path: string, docs: IssuerDocuments, opts?: InfraOptions): Promise<InfraResult>;
  /** Removes both documents. Ready once neither is there. */
  unpublish(path: string, opts?: InfraOptions): Promise<InfraResult>;
  /** The JWKS as published now (what a verifier reads); undefined when there is none. */
  readJwks(path: string, opts?: InfraOptions): Promise<string | undefined>;
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
        // A first publish writes both: the blobs are the cluster's alone, and reading first would
        // double a new cluster's calls to the storage account for answers of 404.
        if (!opts.createFirst && (await this.#store.read(name, opts)) === body) continue;
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

  async readJwks(path: string, opts: InfraOptions = {}): Promise<string | undefined> {
    return this.#store.read(`${path}/${JWKS_PATH}`, opts);
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
