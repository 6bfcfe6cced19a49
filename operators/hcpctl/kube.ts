/**
 * Reaching the service cluster as kubectl does: `--kubeconfig`, else $KUBECONFIG (a list of files,
 * merged; missing ones skipped), else ~/.kube/config, else the in-cluster service account;
 * `--context` picks the context, whose namespace is the default one. Every call's failure becomes
 * a CliError that names the server and what it said.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import type { KubeObject, ResourceType } from "../api/meta/v1.ts";
import { KubeApiError, KubeClient, type WatchEvent } from "../runtime/kube.ts";
import { CliError, explain, type Target } from "./errors.ts";

export interface ConnectOptions {
  kubeconfig?: string;
  context?: string;
  /** Default process.env. */
  env?: Record<string, string | undefined>;
}

function loadFile(kc: KubeConfig, path: string): void {
  try {
    kc.loadFromFile(path);
  } catch (err) {
    throw new CliError(`cannot read kubeconfig ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function loadKubeConfig(opts: ConnectOptions): KubeConfig {
  const env = opts.env ?? process.env;
  const kc = new KubeConfig();
  if (opts.kubeconfig) {
    if (!existsSync(opts.kubeconfig)) throw new CliError(`--kubeconfig ${opts.kubeconfig}: no such file`);
    loadFile(kc, opts.kubeconfig);
    return kc;
  }
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter((f) => f && existsSync(f));
  if (env.KUBECONFIG && listed.length === 0)
    throw new CliError(`KUBECONFIG=${env.KUBECONFIG} names no file that exists`);
  if (listed.length > 0) {
    loadFile(kc, listed[0]!);
    for (const file of listed.slice(1)) {
      const more = new KubeConfig();
      loadFile(more, file);
      kc.mergeConfig(more);
    }
    return kc;
  }
  const home = join(env.HOME ?? homedir(), ".kube", "config");
  if (existsSync(home)) loadFile(kc, home);
  else if (env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else throw new CliError("no kubeconfig: pass --kubeconfig, set KUBECONFIG or create ~/.kube/config");
  return kc;
}

function selectContext(kc: KubeConfig, wanted: string | undefined): string {
  const names = kc.getContexts().map((c) => c.name);
  const available = names.length > 0 ? names.join(", ") : "none";
  if (wanted) {
    if (!kc.getContextObject(wanted))
      throw new CliError(`context "${wanted}" is not in the kubeconfig (it has: ${available})`);
    kc.setCurrentContext(wanted);
  }
  const current = kc.getCurrentContext();
  if (!current || !kc.getContextObject(current))
    throw new CliError(`the kubeconfig has no current context: pass --context (it has: ${available})`);
  if (!kc.getCurrentCluster())
    throw new CliError(`context "${current}" names a cluster the kubeconfig does not define`);
  return current;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface ListQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  signal?: AbortSignal;
}

/** A 404 for an object carries its name in the Status details; one for a resource type does not. */
function isMissingType(err: unknown): boolean {
  if (!(err instanceof KubeApiError) || err.code !== 404) return false;
  const details = (err.status as { details?: { name?: string } } | undefined)?.details;
  return !details?.name;
}

export class Connection {
  readonly client: KubeClient;
  readonly target: Target;
  /** The context's namespace, else "default". */
  readonly namespace: string;

  constructor(opts: ConnectOptions = {}) {
    const kc = loadKubeConfig(opts);
    const context = selectContext(kc, opts.context);
    this.client = new KubeClient(context, kc);
    this.target = { server: this.client.server, context };
    this.namespace = kc.getContextObject(context)?.namespace || "default";
  }

  /** The error to show for a failed call about `type`. */
  explain(err: unknown, type: ResourceType): CliError {
    if (isMissingType(err))
      return new CliError(
        `the API server at ${this.target.server} does not serve ${type.plural}.${type.group}: are the hcp-operators CRDs installed?`,
      );
    return explain(err, this.target);
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject>(
    type: ResourceType,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    try {
      return await this.client.get<T>(type, name, type.namespaced ? namespace : undefined);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404 && !isMissingType(err)) return undefined;
      throw this.explain(err, type);
    }
  }

  async list<T extends KubeObject>(type: ResourceType, q: ListQuery = {}): Promise<ListResult<T>> {
    try {
      const list = await this.client.listAll<T>(type, {
        ...q,
        namespace: type.namespaced ? q.namespace : undefined,
      });
      return { items: list.items, resourceVersion: list.metadata.resourceVersion ?? "" };
    } catch (err) {
      throw this.explain(err, type);
    }
  }

  /** A watch stream; its errors are the client's (callers decide which to retry). */
  watch<T extends KubeObject>(
    type: ResourceType,
    q: ListQuery & { resourceVersion: string },
  ): AsyncGenerator<WatchEvent<T>> {
    return this.client.watch<T>(type, {
      ...q,
      namespace: type.namespaced ? q.namespace : undefined,
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
    });
  }
}
