/**
 * A small client for one Azure Storage blob container: read, write (block blob, whole body) and
 * delete a blob by name, with an Entra ID bearer token for `https://storage.azure.com` and the
 * same TLS trust as the ARM clients. The OIDC documents of a cluster are a few hundred bytes each,
 * so a whole-body PUT is all that is needed; @azure/storage-blob would bring its XML stack and its
 * own pipeline for three calls.
 */
import type { TokenCredential } from "@azure/identity";
import { readFile } from "node:fs/promises";
import { request } from "node:https";
import { rootCertificates } from "node:tls";
import { sdkTlsSettings, type SdkTlsSettings } from "./config.ts";
import { HeldToken } from "./held-token.ts";

/** The scope of storage tokens. */
export const STORAGE_SCOPE = "https://storage.azure.com/.default";
/** The REST version the calls speak (any version since 2017 has these three). */
const STORAGE_API_VERSION = "2021-08-06";
const DEFAULT_TIMEOUT_MS = 10_000;

export interface BlobCallOptions {
  signal?: AbortSignal;
}

/** One container's blobs by name (`a/b/c`, no leading slash). */
export interface BlobStore {
  /** Where the container is, for messages. */
  readonly location: string;
  /** The blob's body, or undefined when there is no such blob. */
  read(name: string, opts?: BlobCallOptions): Promise<string | undefined>;
  /** Creates or replaces the blob. */
  write(name: string, body: string, contentType: string, opts?: BlobCallOptions): Promise<void>;
  /** Removes the blob; resolves false when there was none. */
  remove(name: string, opts?: BlobCallOptions): Promise<boolean>;
}

/** A call the storage service refused or could not answer; `status` 0 when it was never reached. */
export class BlobStoreError extends Error {
  override readonly name = "BlobStoreError";
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export interface HttpsBlobStoreOptions {
  /** `https://<account>.blob.core.windows.net/<container>` (or an emulator's). */
  containerUrl: string;
  /** Tokens for STORAGE_SCOPE; none sends no Authorization (a public or SAS container). */
  credential?: TokenCredential;
  tls?: SdkTlsSettings;
  /** Per call. Default 10 s. */
  timeoutMs?: number;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export class HttpsBlobStore implements BlobStore {
  readonly location: string;
  /** Tokens for STORAGE_SCOPE, kept while fresh; none sends no Authorization. */
  readonly #token: HeldToken | undefined;
  readonly #tls: SdkTlsSettings | undefined;
  readonly #timeoutMs: number;

  constructor(opts: HttpsBlobStoreOptions) {
    const url = opts.containerUrl.replace(/\/+$/, "");
    if (!url.startsWith("https://"))
      throw new TypeError(`blob store: ${url} must be https (bearer tokens are never sent in clear)`);
    this.location = url;
    this.#token = opts.credential ? new HeldToken(opts.credential, STORAGE_SCOPE) : undefined;
    this.#tls = opts.tls;
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async read(name: string, opts: BlobCallOptions = {}): Promise<string | undefined> {
    const reply = await this.#call({ method: "GET", name }, opts);
    if (reply.status === 404) return undefined;
    this.#expect(reply, "read", name, [200]);
    return reply.body;
  }

  async write(name: string, body: string, contentType: string, opts: BlobCallOptions = {}): Promise<void> {
    const headers = { "x-ms-blob-type": "BlockBlob", "content-type": contentType };
    const reply = await this.#call({ method: "PUT", name, headers, body }, opts);
    this.#expect(reply, "write", name, [200, 201]);
  }

  async remove(name: string, opts: BlobCallOptions = {}): Promise<boolean> {
    const reply = await this.#call({ method: "DELETE", name }, opts);
    if (reply.status === 404) return false;
    this.#expect(reply, "delete", name, [200, 202]);
    return true;
  }

  #expect(reply: Reply, verb: string, name: string, ok: number[]): void {
    if (ok.includes(reply.status)) return;
    const header = reply.headers["x-ms-error-code"];
    const code =
      (Array.isArray(header) ? header[0] : header) ?? /<Code>([^<]*)<\/Code>/.exec(reply.body)?.[1];
    throw new BlobStoreError(
      reply.status,
      code ?? `HTTP${reply.status}`,
      `could not ${verb} ${this.location}/${name}: HTTP ${reply.status}${code ? ` ${code}` : ""}`,
    );
  }

  async #call(
    call: { method: string; name: string; headers?: Record<string, string>; body?: string },
    opts: BlobCallOptions,
  ): Promise<Reply> {
    const { method, name, body } = call;
    const url = `${this.location}/${name.split("/").map(encodeURIComponent).join("/")}`;
    const token = await this.#token?.get(opts.signal);
    const headers: Record<string, string> = {
      "x-ms-version": STORAGE_API_VERSION,
      "x-ms-date": new Date().toUTCString(),
      ...call.headers,
      ...(token ? { authorization: `Bearer ${token.token}` } : {}),
      ...(body !== undefined ? { "content-length": String(Buffer.byteLength(body)) } : {}),
    };
    try {
      return await send(
        url,
        { method, headers, ...(body !== undefined ? { body } : {}), tls: this.#tls, signal: opts.signal },
        this.#timeoutMs,
      );
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      throw new BlobStoreError(0, "ServiceUnreachable", `could not reach ${this.location}: ${reason}`);
    }
  }
}

/** A store for `containerUrl`, trusting the public roots plus `caFile` (an emulator's) when given. */
export async function createBlobStore(opts: {
  containerUrl: string;
  credential?: TokenCredential;
  caFile?: string;
}): Promise<HttpsBlobStore> {
  const tls = opts.caFile
    ? sdkTlsSettings([...rootCertificates, await readFile(opts.caFile, "utf8")])
    : undefined;
  return new HttpsBlobStore({
    containerUrl: opts.containerUrl,
    ...(opts.credential ? { credential: opts.credential } : {}),
    ...(tls ? { tls } : {}),
  });
}

function send(
  url: string,
  o: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    tls?: SdkTlsSettings;
    signal?: AbortSignal;
  },
  timeoutMs: number,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: o.method,
        headers: o.headers,
        timeout: timeoutMs,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.tls ? { secureContext: o.tls.secureContext } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(o.body);
  });
}
