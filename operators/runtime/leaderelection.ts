/**
 * Lease-based leader election (coordination.k8s.io/v1), with client-go's semantics and defaults:
 * lease 15 s, renew deadline 10 s, retry 2 s with jitter 1.2. Expiry is judged by the local clock
 * from when *we* last saw the lease change, never from the holder's timestamps, so clock skew
 * between replicas does not matter. The lease is released on shutdown so a successor need not
 * wait for it to expire.
 */
import { sleep } from "./backoff.ts";
import { KubeApiError, type KubeClient, type KubeObject, type ResourceType } from "./kube.ts";
import { silentLogger, type Logger } from "./logger.ts";

export const leaseType: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
};

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  /** Default 15 000 ms. */
  leaseDurationMs?: number;
  /** Default 10 000 ms; must be below leaseDurationMs. */
  renewDeadlineMs?: number;
  /** Default 2 000 ms; renewDeadlineMs must exceed 1.2 × retryPeriodMs. */
  retryPeriodMs?: number;
  /** Give the lease up when stopped. Default true. */
  releaseOnCancel?: boolean;
  log?: Logger;
}

export interface LeaderCallbacks {
  /** Called once leadership is acquired; the signal aborts when it is lost or on shutdown. */
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
}

const jitterFactor = 1.2;

/** MicroTime as the API server wants it: RFC 3339 with microseconds. */
const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectionOptions, "log">> & { log: Logger };
  #observed: { spec: LeaseSpec; at: number; resourceVersion: string } | undefined;
  #leading = false;
  #lastLeader = "";

  constructor(opts: LeaderElectionOptions) {
    this.#o = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      releaseOnCancel: true,
      log: silentLogger,
      ...opts,
    };
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = this.#o;
    if (leaseDurationMs <= renewDeadlineMs)
      throw new Error("leaseDurationMs must be greater than renewDeadlineMs");
    if (renewDeadlineMs <= jitterFactor * retryPeriodMs)
      throw new Error("renewDeadlineMs must be greater than 1.2 × retryPeriodMs");
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** Campaigns until elected, leads until the lease is lost or the signal aborts, then returns. */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    if (!(await this.#acquire(signal, callbacks))) return;
    const leading = new AbortController();
    this.#leading = true;
    this.#o.log.info("Became leader", { lease: this.#o.name, identity: this.#o.identity });
    callbacks.onStartedLeading(leading.signal);
    try {
      await this.#renewLoop(signal);
    } finally {
      this.#leading = false;
      leading.abort();
      if (signal.aborted && this.#o.releaseOnCancel) await this.#release();
      this.#o.log.info("Stopped leading", { lease: this.#o.name, identity: this.#o.identity });
      callbacks.onStoppedLeading?.();
    }
  }

  async #acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    while (!signal.aborted) {
      const ok = await this.#tryAcquireOrRenew().catch((err: unknown) => {
        this.#o.log.error("Failed to acquire lease", err, { lease: this.#o.name });
        return false;
      });
      this.#reportLeader(callbacks);
      if (ok) return true;
      await sleep(this.#o.retryPeriodMs * (1 + Math.random() * (jitterFactor - 1)), signal);
    }
    return false;
  }

  /** Renews every retry period; gives up when no renewal succeeded within the renew deadline. */
  async #renewLoop(signal: AbortSignal): Promise<void> {
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.#o.retryPeriodMs, signal);
      if (signal.aborted) return;
      const ok = await this.#tryAcquireOrRenew().catch(() => false);
      if (ok) lastRenew = Date.now();
      else if (Date.now() - lastRenew > this.#o.renewDeadlineMs) {
        this.#o.log.info("Lost leadership: lease not renewed within the deadline", { lease: this.#o.name });
        return;
      }
    }
  }

  #reportLeader(callbacks: LeaderCallbacks): void {
    const holder = this.#observed?.spec.holderIdentity ?? "";
    if (holder && holder !== this.#lastLeader) {
      this.#lastLeader = holder;
      callbacks.onNewLeader?.(holder);
    }
  }

  #record(lease: Lease): void {
    const spec = lease.spec ?? {};
    const prev = this.#observed;
    const changed =
      !prev || prev.spec.holderIdentity !== spec.holderIdentity || prev.spec.renewTime !== spec.renewTime;
    this.#observed = {
      spec,
      at: changed ? Date.now() : prev.at,
      resourceVersion: lease.metadata.resourceVersion ?? "",
    };
  }

  /** One attempt, as client-go's tryAcquireOrRenew: create, renew ours, or take over an expired lease. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const { client, namespace, name } = this.#o;
    const current = await client.get<Lease>(leaseType, name, namespace).catch((err: unknown) => {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    });
    if (!current) {
      this.#record(
        await client.create<Lease>(leaseType, { metadata: { name, namespace }, spec: this.#desiredSpec() }),
      );
      return true;
    }
    this.#record(current);
    if (this.#heldByOther(current.spec ?? {})) return false;
    try {
      this.#record(
        await client.replace<Lease>(leaseType, { ...current, spec: this.#desiredSpec(current.spec) }),
      );
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) return false;
      throw err;
    }
  }

  /** Held by another identity and, by our own clock since we last saw it change, not yet expired. */
  #heldByOther(spec: LeaseSpec): boolean {
    const held = spec.holderIdentity ?? "";
    const expiresAt = (this.#observed?.at ?? 0) + (spec.leaseDurationSeconds ?? 0) * 1000;
    return held !== "" && held !== this.#o.identity && expiresAt > Date.now();
  }

  #desiredSpec(current?: LeaseSpec): LeaseSpec {
    const now = microTime(new Date());
    const renewing = current?.holderIdentity === this.#o.identity;
    return {
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: Math.round(this.#o.leaseDurationMs / 1000),
      acquireTime: renewing ? current.acquireTime : now,
      renewTime: now,
      leaseTransitions: (current?.leaseTransitions ?? 0) + (current && !renewing ? 1 : 0),
    };
  }

  async #release(): Promise<void> {
    const { client, namespace, name, identity } = this.#o;
    try {
      const current = await client.get<Lease>(leaseType, name, namespace);
      if (current.spec?.holderIdentity !== identity) return;
      const now = microTime(new Date());
      await client.replace<Lease>(leaseType, {
        ...current,
        spec: {
          ...current.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          renewTime: now,
          acquireTime: now,
        },
      });
      this.#o.log.info("Released lease", { lease: name });
    } catch (err) {
      this.#o.log.error("Failed to release lease", err, { lease: name });
    }
  }
}
