/**
 * How a process reaches one cluster's apiserver: its URL, the TLS settings of the connection and
 * the credential of each request, read from a kubeconfig or from the pod's service account.
 *
 * Why not @kubernetes/client-node's KubeConfig for all of it: importing it loads every generated
 * API model, about 70 MB of RSS in each process (measured: a bare Node 24 is 43 MB, our REST
 * client with client-node 148 MB, without it ~80 MB), and the controllers use none of them. The
 * kubeconfigs a region runs on (a pod's service account; client certificates or tokens) are read
 * here. One that needs more (an exec plugin such as kubelogin, an auth provider, a proxy, several
 * files in KUBECONFIG) is handed to client-node, imported only then.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { RequestContext, HttpMethod } from "@kubernetes/client-node/dist/gen/http/http.js";
// A type only: client-node itself is imported when a kubeconfig needs it (delegated).
import type { KubeConfig as ClientNodeKubeConfig } from "@kubernetes/client-node";
import { load } from "js-yaml";
import { Agent, type Dispatcher } from "undici";

/** What one request needs: headers that authenticate it, and the cluster's connection pool. */
export interface Authenticated {
  headers: Record<string, string>;
  dispatcher: Dispatcher;
}

export interface ClusterAccess {
  /** The apiserver's URL without a trailing slash. */
  readonly server: string;
  authenticate(): Promise<Authenticated>;
}

/** The part of client-node's KubeConfig this file uses (a test may still hand one over). */
export interface KubeConfigLike {
  getCurrentCluster(): { server: string } | null;
  applySecurityAuthentication(context: RequestContext): Promise<void>;
}

export type KubeConfigSource = { path: string } | { yaml: string } | { default: true };

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** How long a token read from a file stands; kubelet rotates bound tokens well before they expire. */
const TOKEN_FILE_TTL_MS = 60_000;

/** A kubeconfig, as much of it as this file reads. */
interface RawKubeConfig {
  "current-context"?: string;
  clusters?: Array<{ name?: string; cluster?: Record<string, unknown> }>;
  users?: Array<{ name?: string; user?: Record<string, unknown> }>;
  contexts?: Array<{ name?: string; context?: { cluster?: string; user?: string } }>;
}

/** Kubeconfig fields only client-node handles; a kubeconfig with one is handed to it. */
const DELEGATED_USER_FIELDS = ["exec", "auth-provider", "as", "as-groups", "impersonate"];
const DELEGATED_CLUSTER_FIELDS = ["proxy-url"];

export function isKubeConfigLike(value: unknown): value is KubeConfigLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<KubeConfigLike>).applySecurityAuthentication === "function"
  );
}

/** Access through a client-node KubeConfig: its authentication per request, one pool for all. */
export function accessFromKubeConfig(kc: KubeConfigLike, what = "kubeconfig"): ClusterAccess {
  const current = kc.getCurrentCluster();
  if (!current) throw new Error(`${what} has no current cluster`);
  const server = current.server.replace(/\/$/, "");
  let dispatcher: Dispatcher | undefined;
  return {
    server,
    async authenticate() {
      const ctx = new RequestContext(server, HttpMethod.GET);
      await kc.applySecurityAuthentication(ctx);
      // client-node makes a new Agent per request; its TLS settings are the kubeconfig's, fixed, so keep the first.
      dispatcher ??= ctx.getDispatcher();
      dispatcher ??= new Agent();
      return { headers: ctx.getHeaders(), dispatcher };
    },
  };
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

function named<T extends { name?: string }>(
  list: T[] | undefined,
  name: string | undefined,
  what: string,
): T {
  const found = (list ?? []).find((e) => e.name === name);
  if (!found)
    throw new Error(
      `the kubeconfig's current context names ${what} "${name ?? ""}", which it does not define`,
    );
  return found;
}

/** Inline base64 data, or a file's bytes. */
function material(entry: Record<string, unknown>, fileKey: string, dataKey: string): Buffer | undefined {
  const data = str(entry[dataKey]);
  if (data) return Buffer.from(data, "base64");
  const file = str(entry[fileKey]);
  return file ? readFileSync(file) : undefined;
}

/**
 * A token read from a file and read again once TOKEN_FILE_TTL_MS has passed. A read that fails
 * after one succeeded (kubelet swapping the file) keeps the token it had and tries again next time.
 */
function tokenFromFile(path: string, now: () => number): () => string {
  let token: string | undefined;
  let readAt = -Infinity;
  return () => {
    if (now() - readAt >= TOKEN_FILE_TTL_MS) {
      try {
        token = readFileSync(path, "utf8").trim();
        readAt = now();
      } catch (err) {
        if (token === undefined) throw err;
      }
    }
    return token ?? "";
  };
}

interface Credentials {
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean; servername?: string };
  authorization?: () => string;
}

function directAccess(server: string, credentials: Credentials): ClusterAccess {
  const dispatcher = new Agent({ connect: credentials.tls });
  const authorization = credentials.authorization;
  return {
    server: server.replace(/\/$/, ""),
    authenticate: () => {
      const headers: Record<string, string> = authorization ? { Authorization: authorization() } : {};
      return Promise.resolve({ headers, dispatcher });
    },
  };
}

/** The cluster and user entries the current context names. */
function currentOf(raw: RawKubeConfig): {
  cluster: Record<string, unknown>;
  user: Record<string, unknown>;
  clusterName: string;
} {
  const context = named(raw.contexts, raw["current-context"], "context").context ?? {};
  const cluster = named(raw.clusters, context.cluster, "cluster").cluster ?? {};
  const user = context.user === undefined ? {} : (named(raw.users, context.user, "user").user ?? {});
  return { cluster, user, clusterName: context.cluster ?? "" };
}

function credentialsOf(
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  now: () => number,
): Credentials {
  const tls: Credentials["tls"] = {};
  const ca = material(cluster, "certificate-authority", "certificate-authority-data");
  if (ca) tls.ca = ca;
  if (cluster["insecure-skip-tls-verify"] === true) tls.rejectUnauthorized = false;
  const servername = str(cluster["tls-server-name"]);
  if (servername) tls.servername = servername;
  const cert = material(user, "client-certificate", "client-certificate-data");
  const key = material(user, "client-key", "client-key-data");
  if (cert) tls.cert = cert;
  if (key) tls.key = key;
  const token = str(user["token"]);
  const tokenFile = str(user["tokenFile"]);
  const username = str(user["username"]);
  if (token) return { tls, authorization: () => `Bearer ${token}` };
  if (tokenFile) {
    const read = tokenFromFile(tokenFile, now);
    return { tls, authorization: () => `Bearer ${read()}` };
  }
  if (username) {
    const basic = Buffer.from(`${username}:${str(user["password"]) ?? ""}`).toString("base64");
    return { tls, authorization: () => `Basic ${basic}` };
  }
  return { tls };
}

/** The pod's own service account (KUBERNETES_SERVICE_HOST and the mounted token and CA). */
export function inClusterAccess(
  env: NodeJS.ProcessEnv = process.env,
  dir = SERVICE_ACCOUNT_DIR,
  now: () => number = Date.now,
): ClusterAccess | undefined {
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (!host || !port) return undefined;
  const token = tokenFromFile(join(dir, "token"), now);
  token(); // fails now, not at the first request, when the token is not mounted
  return directAccess(`https://${host.includes(":") ? `[${host}]` : host}:${port}`, {
    tls: { ca: readFileSync(join(dir, "ca.crt")) },
    authorization: () => `Bearer ${token()}`,
  });
}

/** Hands a kubeconfig to client-node (imported at the first request, not before). */
function delegated(server: string, fill: (kc: ClientNodeKubeConfig) => void): ClusterAccess {
  let access: Promise<ClusterAccess> | undefined;
  return {
    server: server.replace(/\/$/, ""),
    async authenticate() {
      access ??= import("@kubernetes/client-node").then(({ KubeConfig }) => {
        const kc = new KubeConfig();
        fill(kc);
        return accessFromKubeConfig(kc);
      });
      return (await access).authenticate();
    },
  };
}

const FILE_KEYS = {
  cluster: ["certificate-authority"],
  user: ["client-certificate", "client-key", "tokenFile"],
};

/** A kubeconfig file read, its relative paths made absolute (so that files can be merged). */
function readKubeConfigFile(path: string): RawKubeConfig {
  const raw = load(readFileSync(path, "utf8")) as RawKubeConfig | null;
  if (typeof raw !== "object" || raw === null)
    throw new Error(`${path} is not a kubeconfig (a YAML mapping)`);
  const absolute = (entry: Record<string, unknown> | undefined, keys: string[]): void => {
    for (const k of keys) {
      const v = str(entry?.[k]);
      if (entry && v && !isAbsolute(v)) entry[k] = join(dirname(path), v);
    }
  };
  for (const c of raw.clusters ?? []) absolute(c.cluster, FILE_KEYS.cluster);
  for (const u of raw.users ?? []) absolute(u.user, FILE_KEYS.user);
  return raw;
}

/** Several kubeconfig files as kubectl merges them: the first to define a name or the context wins. */
function merge(files: RawKubeConfig[]): RawKubeConfig {
  const firstByName = <T extends { name?: string }>(lists: Array<T[] | undefined>): T[] => {
    const seen = new Map<string | undefined, T>();
    for (const e of lists.flatMap((l) => l ?? [])) if (!seen.has(e.name)) seen.set(e.name, e);
    return [...seen.values()];
  };
  const current = files.map((f) => f["current-context"]).find((c) => c !== undefined && c !== "");
  return {
    ...(current !== undefined ? { "current-context": current } : {}),
    clusters: firstByName(files.map((f) => f.clusters)),
    users: firstByName(files.map((f) => f.users)),
    contexts: firstByName(files.map((f) => f.contexts)),
  };
}

/**
 * Access to the cluster a kubeconfig's current context names: a file, YAML text, or the default
 * as kubectl finds it (the files KUBECONFIG lists, else ~/.kube/config, else the pod's own
 * service account).
 */
export function loadClusterAccess(source: KubeConfigSource, now: () => number = Date.now): ClusterAccess {
  if ("yaml" in source) {
    const raw = load(source.yaml) as RawKubeConfig | null;
    if (typeof raw !== "object" || raw === null) throw new Error("the kubeconfig is not a YAML mapping");
    return fromRaw(raw, now, (kc) => kc.loadFromString(source.yaml));
  }
  if ("path" in source)
    return fromRaw(readKubeConfigFile(source.path), now, (kc) => kc.loadFromFile(source.path));
  const listed = (process.env["KUBECONFIG"] ?? "").split(":").filter(Boolean);
  const home = join(homedir(), ".kube", "config");
  const files = listed.length > 0 ? listed.filter(exists) : exists(home) ? [home] : [];
  if (files.length > 0)
    return fromRaw(merge(files.map(readKubeConfigFile)), now, (kc) => kc.loadFromDefault());
  const inCluster = inClusterAccess(process.env, SERVICE_ACCOUNT_DIR, now);
  if (!inCluster)
    throw new Error(
      "no kubeconfig: none of KUBECONFIG's files or ~/.kube/config exists, and this is not a pod",
    );
  return inCluster;
}

function exists(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

function fromRaw(
  raw: RawKubeConfig,
  now: () => number,
  fill: (kc: ClientNodeKubeConfig) => void,
): ClusterAccess {
  const { cluster, user, clusterName } = currentOf(raw);
  const server = str(cluster["server"]);
  if (!server) throw new Error(`the kubeconfig's cluster "${clusterName}" has no server`);
  if (DELEGATED_USER_FIELDS.some((k) => k in user) || DELEGATED_CLUSTER_FIELDS.some((k) => k in cluster))
    return delegated(server, fill);
  return directAccess(server, credentialsOf(cluster, user, now));
}
