/**
 * An Azure Storage emulator for tests and the local region: one https server on 127.0.0.1 with a
 * CA made for the run, holding one storage account's block blobs. Two faces, as in a region:
 *
 * - the Blob service, path-style as Azurite has it: `PUT|GET|DELETE <endpoint>/<account>/<container>/<blob>`,
 *   with Blob's status codes, `x-ms-error-code` and XML error bodies, `x-ms-version` required, and
 *   Entra ID bearer tokens for `https://storage.azure.com` checked by the ARM emulator's authority
 *   (when given one);
 * - the static website that the region's Front Door serves the OIDC documents from: anonymous
 *   `GET <endpoint>/web/<blob>` reads the `$web` container.
 *
 * Tests inject faults (an error status, or a connection dropped before any answer) and read the
 * request log.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenHttps } from "../https-server.ts";

/** The container a static website serves. */
export const WEB_CONTAINER = "$web";
export const STORAGE_AUDIENCE = "https://storage.azure.com";
const WEB_PREFIX = "web";

export interface StoredBlob {
  container: string;
  name: string;
  body: string;
  contentType: string;
}

export interface StorageRequest {
  method: string;
  path: string;
  status: number;
  injected: boolean;
}

/** A fault: `status` answers with that Blob error; `drop` closes the connection unanswered. */
export type StorageFault = { status: number; code?: string } | { drop: true };

export interface StorageFaultRule {
  /** Only this method (default: any). */
  method?: string;
  /** Only paths containing this (default: any). */
  pathIncludes?: string;
  /** How many requests it takes (default: every one until removed). */
  times?: number;
  fault: StorageFault;
}

export interface StorageFaults {
  add(rule: StorageFaultRule): { remove(): void };
  clear(): void;
}

export interface StorageEmulator {
  /** https://127.0.0.1:<port> */
  endpoint: string;
  /** PEM of the CA that signed the server certificate. */
  caPath: string;
  account: string;
  /** `<endpoint>/<account>`: the account's Blob service URL. */
  blobServiceUrl: string;
  /** `<endpoint>/web/`: the static website (what Front Door serves). */
  webEndpoint: string;
  faults: StorageFaults;
  /** Every blob there is now. */
  blobs(): StoredBlob[];
  requests(): StorageRequest[];
  stop(): Promise<void>;
}

export interface StartStorageEmulatorOptions {
  /** Certificates go to `<workDir>/storage-emulator/`. */
  workDir: string;
  /** Default "hcpoidclocal". */
  account?: string;
  /** Checks a request's Authorization header: why it is refused, or undefined. None: anything goes. */
  verifyBearer?: (authorization: string | undefined, audience: string) => string | undefined;
  /** Default: a free port chosen by the OS. */
  port?: number;
  /** Private containers the account holds besides `$web` (as made beforehand in Azure). Default none. */
  containers?: string[];
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export async function startStorageEmulator(opts: StartStorageEmulatorOptions): Promise<StorageEmulator> {
  const { server, endpoint, caPath } = await listenHttps(opts.workDir, "storage-emulator", opts.port);
  const account = opts.account ?? "hcpoidclocal";
  const state: State = {
    account,
    containers: new Map(
      [WEB_CONTAINER, ...(opts.containers ?? [])].map((c) => [c, new Map<string, Blob>()] as const),
    ),
    rules: [],
    log: [],
    verifyBearer: opts.verifyBearer,
  };
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    void serve(state, req, res);
  });
  return {
    endpoint,
    caPath,
    account,
    blobServiceUrl: `${endpoint}/${account}`,
    webEndpoint: `${endpoint}/${WEB_PREFIX}/`,
    faults: {
      add(rule) {
        const entry = { ...rule };
        state.rules.push(entry);
        return { remove: () => void state.rules.splice(state.rules.indexOf(entry) >>> 0, 1) };
      },
      clear: () => void state.rules.splice(0),
    },
    blobs: () =>
      [...state.containers].flatMap(([container, blobs]) =>
        [...blobs].map(([name, b]) => ({ container, name, body: b.body, contentType: b.contentType })),
      ),
    requests: () => [...state.log],
    stop: async () => {
      state.rules.splice(0);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

interface State {
  account: string;
  containers: Map<string, Map<string, Blob>>;
  rules: StorageFaultRule[];
  log: StorageRequest[];
  verifyBearer: StartStorageEmulatorOptions["verifyBearer"];
}

async function serve(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? "GET").toUpperCase();
  const url = new URL(req.url ?? "/", "https://127.0.0.1");
  const entry: StorageRequest = { method, path: url.pathname, status: 0, injected: false };
  state.log.push(entry);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const fault = takeFault(state, method, url.pathname);
  if (fault && "drop" in fault) {
    entry.injected = true;
    res.socket?.destroy();
    return;
  }
  let reply: Reply;
  if (fault) {
    entry.injected = true;
    reply = blobError(fault.status, fault.code ?? "InternalError", "Injected fault.");
  } else {
    try {
      reply = answer(state, { method, url, req, body: Buffer.concat(chunks).toString("utf8") });
    } catch (err) {
      reply = blobError(
        500,
        "InternalError",
        `storage emulator: ${err instanceof Error ? err.stack : String(err)}`,
      );
    }
  }
  entry.status = reply.status;
  const body = reply.body ?? "";
  res.writeHead(reply.status, {
    "x-ms-request-id": crypto.randomUUID(),
    "x-ms-version": "2021-08-06",
    "content-length": String(Buffer.byteLength(body)),
    ...reply.headers,
  });
  res.end(body);
}

function takeFault(state: State, method: string, path: string): StorageFault | undefined {
  const rule = state.rules.find(
    (r) =>
      (!r.method || r.method.toUpperCase() === method) && (!r.pathIncludes || path.includes(r.pathIncludes)),
  );
  if (!rule) return undefined;
  if (rule.times !== undefined && --rule.times <= 0) state.rules.splice(state.rules.indexOf(rule), 1);
  return rule.fault;
}

function segmentsOf(url: URL): string[] {
  return url.pathname
    .split("/")
    .filter((s) => s.length > 0)
    .map(decodeURIComponent);
}

interface BlobRequest {
  method: string;
  url: URL;
  req: IncomingMessage;
  body: string;
}

function answer(state: State, r: BlobRequest): Reply {
  const [first, container, ...rest] = segmentsOf(r.url);
  if (first === WEB_PREFIX)
    return website(state, r.method, [container ?? "", ...rest].filter(Boolean).join("/"));
  if (first !== state.account) return blobError(400, "InvalidUri", `No account ${first ?? ""} here.`);
  const refused = authenticate(state, r.req);
  if (refused) return refused;
  const blobs = state.containers.get(container ?? "");
  if (!blobs) return blobError(404, "ContainerNotFound", "The specified container does not exist.");
  const name = rest.join("/");
  if (!name)
    return blobError(400, "InvalidUri", "The requested URI does not represent any resource on the server.");
  return blobVerb(blobs, name, r);
}

function blobVerb(blobs: Map<string, Blob>, name: string, r: BlobRequest): Reply {
  if (r.method === "PUT") return putBlob(blobs, name, r.req, r.body);
  if (r.method === "GET" || r.method === "HEAD") return getBlob(blobs, name, r.method === "HEAD");
  if (r.method === "DELETE") {
    if (!blobs.delete(name)) return blobError(404, "BlobNotFound", "The specified blob does not exist.");
    return { status: 202 };
  }
  return blobError(
    405,
    "UnsupportedHttpVerb",
    `The resource doesn't support the specified HTTP verb ${r.method}.`,
  );
}

/** Bearer tokens need x-ms-version 2017-11-09 or later, as in Azure. */
function authenticate(state: State, req: IncomingMessage): Reply | undefined {
  const version = header(req, "x-ms-version");
  if (!version)
    return blobError(
      400,
      "MissingRequiredHeader",
      "An HTTP header that's mandatory for this request is not specified.",
    );
  if (!state.verifyBearer) return undefined;
  const auth = header(req, "authorization");
  if (!auth)
    return blobError(401, "NoAuthenticationInformation", "Server failed to authenticate the request.");
  if (version < "2017-11-09")
    return blobError(400, "InvalidHeaderValue", "Bearer tokens need x-ms-version 2017-11-09 or later.");
  const why = state.verifyBearer(auth, STORAGE_AUDIENCE);
  return why ? blobError(401, "InvalidAuthenticationInfo", why) : undefined;
}

function putBlob(blobs: Map<string, Blob>, name: string, req: IncomingMessage, body: string): Reply {
  const type = header(req, "x-ms-blob-type");
  if (type !== "BlockBlob")
    return blobError(
      400,
      type ? "InvalidHeaderValue" : "MissingRequiredHeader",
      "x-ms-blob-type must be BlockBlob.",
    );
  const modified = new Date();
  const etag = `"0x${modified.getTime().toString(16).toUpperCase()}${blobs.size}"`;
  blobs.set(name, {
    body,
    contentType: header(req, "content-type") ?? "application/octet-stream",
    etag,
    modified,
  });
  return { status: 201, headers: { etag, "last-modified": modified.toUTCString() } };
}

type Blob = { body: string; contentType: string; etag: string; modified: Date };

function getBlob(blobs: Map<string, Blob>, name: string, headOnly: boolean): Reply {
  const blob = blobs.get(name);
  if (!blob) return blobError(404, "BlobNotFound", "The specified blob does not exist.");
  return {
    status: 200,
    headers: {
      "content-type": blob.contentType,
      etag: blob.etag,
      "last-modified": blob.modified.toUTCString(),
      "x-ms-blob-type": "BlockBlob",
    },
    ...(headOnly ? {} : { body: blob.body }),
  };
}

/** The static website: anonymous reads of `$web`; a missing document is a plain 404. */
function website(state: State, method: string, name: string): Reply {
  if (method !== "GET" && method !== "HEAD") return { status: 405, body: "Method not allowed" };
  const blob = state.containers.get(WEB_CONTAINER)?.get(name);
  if (!blob)
    return {
      status: 404,
      headers: { "content-type": "text/plain" },
      body: "The requested content does not exist.",
    };
  return {
    status: 200,
    headers: { "content-type": blob.contentType, etag: blob.etag },
    ...(method === "HEAD" ? {} : { body: blob.body }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Blob's error: the code in `x-ms-error-code` and an XML body. */
function blobError(status: number, code: string, message: string): Reply {
  return {
    status,
    headers: { "x-ms-error-code": code, "content-type": "application/xml" },
    body: `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error>`,
  };
}

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
