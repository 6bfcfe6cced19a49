/**
 * A bearer token for one scope, kept until shortly before it expires, for the clients here that
 * send their own requests rather than through an SDK pipeline (which keeps its token the same
 * way): asking the credential on every call costs a look-up in MSAL's cache each time, 3% of the
 * operators' main thread in the lifecycle bench when the blob store did it.
 */
import type { AccessToken, TokenCredential } from "@azure/identity";

/** A token is asked for again this long before it expires (the SDK pipelines wait as long). */
const REFRESH_MARGIN_MS = 2 * 60_000;

export class HeldToken {
  readonly #credential: TokenCredential;
  readonly #scope: string;
  #token: AccessToken | undefined;

  constructor(credential: TokenCredential, scope: string) {
    this.#credential = credential;
    this.#scope = scope;
  }

  /** The held token while it is fresh, else a new one; null when the credential gives none. */
  async get(signal?: AbortSignal): Promise<AccessToken | null> {
    const held = this.#token;
    if (held && held.expiresOnTimestamp - REFRESH_MARGIN_MS > Date.now()) return held;
    const token = await this.#credential.getToken(this.#scope, signal ? { abortSignal: signal } : {});
    this.#token = token ?? undefined;
    return token;
  }
}
