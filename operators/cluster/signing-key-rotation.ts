/**
 * Rotating a cluster's service-account signing key with no token broken on the way, as four
 * operations on the Secret that stores its keyring (signing-keyring.ts). Each reads the Secret,
 * changes the keyring if it is not already as the step leaves it, and writes it back guarded by
 * the resourceVersion; a lost race reads again. So each may be re-run after a crash at any point
 * and changes nothing a second time. The cluster controller's reconcile carries the rest out:
 * it publishes every key that must verify, and gives the HostedCluster only the active key.
 *
 *   beginRotation     a `next` key is stored; the reconcile publishes it beside the active one
 *   switchSigningKey  next becomes active once the JWKS holds it; the old public key is retired
 *   retireExpired     retired keys whose tokens have all expired are dropped from the Secret
 */
import { originalUid, type HcpCluster } from "../api/v1alpha1/index.ts";
import type { InfraOptions } from "./infrastructure.ts";
import {
  issuerPath,
  newSigningKey,
  type IssuerDocumentStore,
  type KeyOwner,
  type KeyringStore,
} from "./oidc.ts";
import { keyId, publicKeyPem, unexpiredRetired, type SigningKeyring } from "./signing-keyring.ts";

/**
 * How long a retired public key stays published: the longest lifetime of a token the hosted
 * kube-apiserver issues. HyperShift's control-plane-operator (v2/kas/config.go, generateConfig)
 * sets no --service-account-max-token-expiration and leaves --service-account-extend-token-expiration
 * at kube-apiserver's default (true), so the pod tokens admission injects (3607 s asked) are
 * issued with an exp one year out (ExpirationExtensionSeconds, 365 days, in kube-apiserver's
 * serviceaccount token storage). A TokenRequest that asks for more than a year is not covered.
 */
export const MAX_TOKEN_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * The old key signs on after the switch until the work reaches the management cluster and
 * HyperShift has rolled the kube-apiserver onto the new key; a day covers that with room, so a
 * token signed in that gap still finds its key.
 */
export const SWITCH_ROLLOUT_ALLOWANCE_MS = 24 * 60 * 60 * 1000;

/** switchSigningKey was asked to make a key active that verifiers cannot yet read. */
export class SigningKeyNotPublishedError extends Error {
  override readonly name = "SigningKeyNotPublishedError";
}

/** There is no rotation to switch: beginRotation has not run. */
export class NoRotationBegunError extends Error {
  override readonly name = "NoRotationBegunError";
}

export type RotationStage = "none" | "begun" | "switched";

/** Where a cluster's rotation stands, as its Secret and its published JWKS show it. */
export interface RotationState {
  /** none: one key; begun: a next key exists; switched: no next key, a retired key still verifies. */
  stage: RotationStage;
  activeKid: string;
  nextKid?: string;
  /** The kids of the JWKS verifiers read now (empty when none is published). */
  publishedKids: string[];
  /** The next key is in the published JWKS: switchSigningKey may run. */
  nextPublished: boolean;
  /** Retired keys still in the Secret, each with the instant until which it must verify. */
  retired: Array<{ kid: string; verifyUntil: Date }>;
  /** When retireExpired has something to drop next (the earliest verify-until), if ever. */
  nextRetirementAt?: Date;
}

export interface SigningKeyRotationOptions {
  keys: KeyringStore;
  documents: Pick<IssuerDocumentStore, "readJwks">;
  /** Asks the cluster controller to reconcile the cluster (publish what the Secret now holds). */
  wake?: (cluster: HcpCluster) => void;
  /** Default MAX_TOKEN_LIFETIME_MS. */
  maxTokenLifetimeMs?: number;
  /** Default SWITCH_ROLLOUT_ALLOWANCE_MS. */
  rolloutAllowanceMs?: number;
  now?: () => number;
  /** Makes the next key; default a new RSA-2048 key. */
  newKey?: () => Promise<string>;
}

/** How many lost races an operation reads again through before it gives up (the caller retries). */
const MAX_CONFLICTS = 5;

export class SigningKeyRotation {
  readonly #keys: KeyringStore;
  readonly #documents: Pick<IssuerDocumentStore, "readJwks">;
  readonly #wake: (cluster: HcpCluster) => void;
  /** How long after a switch the old public key must still verify. */
  readonly #verifyForMs: number;
  readonly #now: () => number;
  readonly #newKey: () => Promise<string>;

  constructor(opts: SigningKeyRotationOptions) {
    this.#keys = opts.keys;
    this.#documents = opts.documents;
    this.#wake = opts.wake ?? (() => {});
    this.#verifyForMs =
      (opts.maxTokenLifetimeMs ?? MAX_TOKEN_LIFETIME_MS) +
      (opts.rolloutAllowanceMs ?? SWITCH_ROLLOUT_ALLOWANCE_MS);
    this.#now = opts.now ?? Date.now;
    this.#newKey = opts.newKey ?? newSigningKey;
  }

  async rotationState(cluster: HcpCluster, signal?: AbortSignal): Promise<RotationState> {
    const { ring } = await this.#read(cluster, { signal });
    const publishedKids = await this.#publishedKids(cluster, { signal });
    const nextKid = ring.next ? keyId(ring.next) : undefined;
    const retired = ring.retired.map((r) => ({ kid: r.kid, verifyUntil: new Date(r.verifyUntil) }));
    const earliest = Math.min(...retired.map((r) => r.verifyUntil.getTime()));
    return {
      stage: ring.next ? "begun" : ring.retired.length ? "switched" : "none",
      activeKid: keyId(ring.active),
      ...(nextKid ? { nextKid } : {}),
      publishedKids,
      nextPublished: nextKid !== undefined && publishedKids.includes(nextKid),
      retired,
      ...(retired.length ? { nextRetirementAt: new Date(earliest) } : {}),
    };
  }

  /** Stores a next key unless one is stored already. */
  async beginRotation(cluster: HcpCluster, signal?: AbortSignal): Promise<void> {
    let made: string | undefined;
    await this.#change(cluster, { signal }, async (ring) => {
      if (ring.next) return undefined;
      // Made once per call: a lost race reuses it rather than paying for another key.
      made ??= await this.#newKey();
      return { ...ring, next: made };
    });
  }

  /**
   * Makes the next key the active one and retires the old active key's public half until every
   * token it can have signed has expired. Refuses while the published JWKS lacks the next key:
   * a token signed with a key verifiers cannot read yet would be refused. A no-op once switched.
   */
  async switchSigningKey(cluster: HcpCluster, signal?: AbortSignal): Promise<void> {
    const opts = { signal };
    await this.#change(cluster, opts, async (ring) => {
      if (!ring.next) {
        if (ring.retired.length) return undefined;
        throw new NoRotationBegunError(
          `${nameOf(cluster)} has no next signing key: begin the rotation first`,
        );
      }
      const nextKid = keyId(ring.next);
      const published = await this.#publishedKids(cluster, opts);
      if (!published.includes(nextKid))
        throw new SigningKeyNotPublishedError(
          `The next signing key ${nextKid} of ${nameOf(cluster)} is not in its published JWKS yet; ` +
            `it may sign only once verifiers can read it`,
        );
      const verifyUntil = new Date(this.#now() + this.#verifyForMs).toISOString();
      const oldKid = keyId(ring.active);
      const retired = [
        ...ring.retired.filter((r) => r.kid !== oldKid),
        { kid: oldKid, publicKey: publicKeyPem(ring.active), verifyUntil },
      ];
      return { active: ring.next, retired };
    });
  }

  /** Drops the retired keys whose verify-until instant is not after `now`. */
  async retireExpired(cluster: HcpCluster, now: Date, signal?: AbortSignal): Promise<void> {
    await this.#change(cluster, { signal }, (ring) => {
      const kept = unexpiredRetired(ring, now.getTime());
      return Promise.resolve(kept.length === ring.retired.length ? undefined : { ...ring, retired: kept });
    });
  }

  /**
   * Reads, changes and writes back the cluster's keyring until the write lands on the version it
   * read. `change` resolves undefined when the keyring is already as wanted: nothing is written.
   */
  async #change(
    cluster: HcpCluster,
    opts: InfraOptions,
    change: (ring: SigningKeyring) => Promise<SigningKeyring | undefined>,
  ): Promise<void> {
    const owner = ownerOf(cluster);
    for (let attempt = 0; attempt < MAX_CONFLICTS; attempt++) {
      const stored = await this.#read(cluster, opts);
      const changed = await change(stored.ring);
      if (!changed) return;
      if (await this.#keys.replace(owner, changed, stored.version, opts)) {
        this.#wake(cluster);
        return;
      }
    }
    throw new Error(`The signing keys of ${nameOf(cluster)} changed under ${MAX_CONFLICTS} writes in a row`);
  }

  async #read(cluster: HcpCluster, opts: InfraOptions) {
    const stored = await this.#keys.read(ownerOf(cluster), opts);
    if (!stored) throw new Error(`${nameOf(cluster)} has no signing key yet`);
    return stored;
  }

  async #publishedKids(cluster: HcpCluster, opts: InfraOptions): Promise<string[]> {
    const body = await this.#documents.readJwks(issuerPath(cluster), opts);
    if (!body) return [];
    const jwks = JSON.parse(body) as { keys?: Array<{ kid?: unknown }> };
    return (jwks.keys ?? []).map((k) => k.kid).filter((kid): kid is string => typeof kid === "string");
  }
}

function ownerOf(cluster: HcpCluster): KeyOwner {
  return { uid: originalUid(cluster), name: nameOf(cluster) };
}

function nameOf(cluster: HcpCluster): string {
  return `${cluster.metadata.namespace ?? ""}/${cluster.metadata.name ?? ""}`;
}
