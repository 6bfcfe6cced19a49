/**
 * The session's way to its hosted cluster: the kubeconfig the session controller wrote (server
 * URL, CA, client certificate and key, all inline) as a node:https Agent, one per Secret
 * resourceVersion, so a reissued credential takes effect at the next request.
 */
import { Agent } from "node:https";
import { load } from "js-yaml";

export interface SessionUpstream {
  /** The hosted apiserver's URL without a trailing slash. */
  server: URL;
  agent: Agent;
}

type Entry = Record<string, unknown>;
interface Named {
  name?: string;
  context?: Entry;
  cluster?: Entry;
  user?: Entry;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

function field(entry: Entry | undefined, key: string, what: string): Buffer {
  const data = text(entry?.[key]);
  if (!data) throw new Error(`the session's kubeconfig has no ${what} (${key})`);
  return Buffer.from(data, "base64");
}

/** The current context's cluster and user entries; a missing one is an error naming it. */
function currentEntries(doc: Entry): { cluster: Entry; user: Entry } {
  const list = (key: string): Named[] => (Array.isArray(doc[key]) ? (doc[key] as Named[]) : []);
  const contexts = list("contexts");
  const current = text(doc["current-context"]);
  const context = (contexts.find((c) => c.name === current) ?? contexts[0])?.context;
  const clusterName = text(context?.cluster) ?? "";
  const userName = text(context?.user) ?? "";
  const cluster = list("clusters").find((c) => c.name === clusterName)?.cluster;
  const user = list("users").find((u) => u.name === userName)?.user;
  if (!cluster) throw new Error(`the session's kubeconfig defines no cluster "${clusterName}"`);
  if (!user) throw new Error(`the session's kubeconfig defines no user "${userName}"`);
  return { cluster, user };
}

/** Parses the kubeconfig's current context; a bad one is an error naming what is missing. */
export function upstreamFromKubeconfig(yaml: string): SessionUpstream {
  const doc = load(yaml) as Entry | null;
  if (!doc || typeof doc !== "object") throw new Error("the session's kubeconfig is not a YAML map");
  const { cluster, user } = currentEntries(doc);
  const server = text(cluster.server);
  if (!server) throw new Error("the session's kubeconfig has no server URL");
  const agent = new Agent({
    ca: field(cluster, "certificate-authority-data", "CA"),
    cert: field(user, "client-certificate-data", "client certificate"),
    key: field(user, "client-key-data", "client key"),
    keepAlive: true,
  });
  return { server: new URL(server.replace(/\/$/, "")), agent };
}

/** One Agent per Secret resourceVersion; the previous one is closed when the Secret changes. */
export class UpstreamCache {
  readonly #bySecret = new Map<string, { resourceVersion: string; upstream: SessionUpstream }>();

  get(secret: string, resourceVersion: string, kubeconfig: string): SessionUpstream {
    const cached = this.#bySecret.get(secret);
    if (cached?.resourceVersion === resourceVersion) return cached.upstream;
    cached?.upstream.agent.destroy();
    const upstream = upstreamFromKubeconfig(kubeconfig);
    this.#bySecret.set(secret, { resourceVersion, upstream });
    return upstream;
  }

  forget(secret: string): void {
    this.#bySecret.get(secret)?.upstream.agent.destroy();
    this.#bySecret.delete(secret);
  }

  close(): void {
    for (const secret of [...this.#bySecret.keys()]) this.forget(secret);
  }
}
