/**
 * `hcpctl describe cluster NAME`: the tree from the HcpCluster down to what the management cluster
 * reported, read from the service cluster only; `-o json|yaml` prints the same tree as data;
 * `--watch` draws it again whenever one of its objects changes; `--from DIR` draws it from a
 * must-gather directory instead, as of its gathering (both are a ClusterSource, source.ts).
 */
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { directorySource } from "../gather.ts";
import type { ClusterSnapshot, ClusterTree } from "../model.ts";
import { toJson, toYaml } from "../output.ts";
import { renderTree, type ShowConditions } from "../render-tree.ts";
import { resolveResource } from "../resources.ts";
import { notFound } from "../snapshot.ts";
import { liveSource, type ClusterSource } from "../source.ts";
import { buildTree } from "../tree.ts";
import { warningLogger, watchCluster } from "../watch.ts";

export interface DescribeOptions {
  namespace?: string;
  output?: "json" | "yaml";
  showConditions: ShowConditions;
  grouping: boolean;
  watch: boolean;
  /** A must-gather directory to read instead of the service cluster. */
  from?: string;
}

/** Kinds --show-conditions takes (a kind may also be qualified by its group). */
export const CONDITION_KINDS = [
  "HcpCluster",
  "NodePool",
  "ExternalAuth",
  "ManagementCluster",
  "ManifestWork",
  "HostedCluster",
];

/** `all`, or a comma-separated list of kinds. */
export function parseShowConditions(value: string): ShowConditions {
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.some((p) => p.toLowerCase() === "all")) return { all: true };
  const known = new Set(CONDITION_KINDS.map((k) => k.toLowerCase()));
  const unknown = parts.filter((p) => !known.has(p.toLowerCase().split(".")[0] ?? ""));
  if (parts.length === 0 || unknown.length > 0)
    throw new CliError(
      `unknown kind "${unknown[0] ?? value}" in --show-conditions: expected all or a comma-separated list of ${CONDITION_KINDS.join(", ")}`,
    );
  return { all: false, kinds: new Set(parts.map((p) => p.toLowerCase())) };
}

/** `now` is when SINCE is measured from: the present, or the gathering of a directory. */
function render(tree: ClusterTree, io: Io, opts: DescribeOptions, now = io.now()): string {
  if (opts.output === "json") return toJson(tree);
  if (opts.output === "yaml") return toYaml(tree);
  return renderTree(tree, {
    now,
    showConditions: opts.showConditions,
    grouping: opts.grouping,
    paint: io.paint,
  });
}

export async function runDescribe(
  io: Io,
  connect: Connect,
  args: { resource: string; name: string; opts: DescribeOptions },
): Promise<void> {
  resolveResource(args.resource, ["clusters"]);
  const { opts } = args;
  if (opts.from !== undefined && opts.watch)
    throw new CliError("--watch follows the live cluster: it cannot be combined with --from");
  if (opts.from !== undefined) {
    await describeOnce(io, directorySource(opts.from), args);
    return;
  }
  const conn = connect();
  if (!opts.watch) {
    await describeOnce(
      io,
      liveSource(conn, () => io.now()),
      args,
    );
    return;
  }
  const target = { name: args.name, namespace: opts.namespace ?? conn.namespace };
  const tree = (s: ClusterSnapshot): ClusterTree => buildTree(s, new Date(io.now()));
  const { snapshot } = await liveSource(conn, () => io.now()).read(target.name, target.namespace);
  await watchTree(io, conn, { target, tree, first: tree(snapshot), opts });
}

/** One tree from a source, with ages as of when the source's objects were read. */
async function describeOnce(
  io: Io,
  source: ClusterSource,
  args: { name: string; opts: DescribeOptions },
): Promise<void> {
  const { snapshot, readAt } = await source.read(args.name, args.opts.namespace);
  io.stdout.write(render(buildTree(snapshot, new Date(readAt)), io, args.opts, readAt));
}

/** Draws the tree, then again on every change of its objects, until Ctrl-C or the cluster is gone. */
async function watchTree(
  io: Io,
  conn: Connection,
  w: {
    target: { name: string; namespace: string };
    tree: (s: ClusterSnapshot) => ClusterTree;
    first: ClusterTree;
    opts: DescribeOptions;
  },
): Promise<void> {
  const screen = new Screen(io, w.opts);
  screen.show(w.first);
  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal]);
  // A status write touches the cluster, its works and its pools at once: one redraw per burst.
  const changed = debounce(() => redraw(), WATCH_DEBOUNCE_MS, signal);
  const watch = watchCluster(conn, w.target, changed, {
    signal,
    log: warningLogger((l) => io.stderr.write(l)),
  });
  function redraw(): void {
    const s = watch.snapshot();
    if (s) screen.show(w.tree(s));
    else stop.abort();
  }
  if (await watch.synced()) redraw();
  await aborted(signal);
  if (stop.signal.aborted && !io.signal.aborted)
    io.stderr.write(`${notFound(w.target.name, w.target.namespace).message}: it was deleted\n`);
}

const WATCH_DEBOUNCE_MS = 100;

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** `fn` once, `ms` after the first of a burst of calls; never after the signal aborts. */
function debounce(fn: () => void, ms: number, signal: AbortSignal): () => void {
  let timer: NodeJS.Timeout | undefined;
  signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  return () => {
    if (timer || signal.aborted) return;
    timer = setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };
}

/** Draws a tree only when it differs from the last one: over the old one on a terminal, below it otherwise. */
class Screen {
  readonly #io: Io;
  readonly #opts: DescribeOptions;
  #last: string | undefined;

  constructor(io: Io, opts: DescribeOptions) {
    this.#io = io;
    this.#opts = opts;
  }

  show(tree: ClusterTree): void {
    // What the objects say, not when they were read nor how long ago things changed.
    const content = JSON.stringify(tree.root);
    if (content === this.#last) return;
    const first = this.#last === undefined;
    this.#last = content;
    const text = render(tree, this.#io, this.#opts);
    const clear = this.#io.stdout.isTTY && !this.#opts.output;
    this.#io.stdout.write(clear ? `\x1b[H\x1b[2J${text}` : first ? text : `\n${text}`);
  }
}
