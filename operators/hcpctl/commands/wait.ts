/**
 * `hcpctl wait cluster NAME --for condition=Ready[=True] | --for delete [--timeout 20m]`, with
 * kubectl wait's contract: a watch, not a poll; a condition counts only once it was computed for
 * the object's current generation; exit 0 when met, 1 with "timed out waiting" when not.
 */
import type { KubeObject } from "../../api/meta/v1.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { nameOf } from "../output.ts";
import { resolveResource, type ResourceInfo } from "../resources.ts";
import { parseDuration } from "../time.ts";
import { startInformer, warningLogger } from "../watch.ts";

export type WaitFor = { kind: "delete" } | { kind: "condition"; type: string; status: string };

export interface WaitOptions {
  namespace?: string;
  for: string;
  timeout: string;
}

export function parseFor(text: string): WaitFor {
  if (text.toLowerCase() === "delete") return { kind: "delete" };
  const m = /^condition=([^=]+)(?:=(.+))?$/i.exec(text);
  if (!m) throw new CliError(`invalid --for "${text}": expected condition=TYPE[=STATUS] or delete`);
  return { kind: "condition", type: m[1] ?? "", status: m[2] ?? "True" };
}

interface Conditioned extends KubeObject {
  status?: { conditions?: Array<{ type: string; status: string; observedGeneration?: number }> };
}

/** Met when the condition has the status, computed for this generation (when it says which). */
export function conditionMet(obj: Conditioned | undefined, want: WaitFor): boolean {
  if (want.kind === "delete") return obj === undefined;
  const c = obj?.status?.conditions?.find((x) => x.type.toLowerCase() === want.type.toLowerCase());
  if (!c || c.status.toLowerCase() !== want.status.toLowerCase()) return false;
  const generation = obj?.metadata.generation;
  return c.observedGeneration === undefined || generation === undefined || c.observedGeneration >= generation;
}

function describeWant(want: WaitFor): string {
  return want.kind === "delete" ? "deleted" : "condition met";
}

/** Resolves true when met, false when the timeout or the signal ends the wait first. */
async function watchUntil(
  io: Io,
  conn: Connection,
  q: { info: ResourceInfo; name: string; namespace: string; want: WaitFor; timeoutMs: number },
): Promise<boolean> {
  const first = await conn.get<Conditioned>(q.info.type, q.name, q.namespace);
  if (!first && q.want.kind === "condition") {
    const where = q.info.type.namespaced ? ` in namespace "${q.namespace}"` : "";
    throw new CliError(`${q.info.singular} "${q.name}" not found${where}`);
  }
  if (conditionMet(first, q.want)) return true;
  if (q.timeoutMs === 0) return false;
  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal, AbortSignal.timeout(q.timeoutMs)]);
  let met = false;
  const informer = startInformer<Conditioned>(
    conn,
    {
      type: q.info.type,
      namespace: q.info.type.namespaced ? q.namespace : undefined,
      fieldSelector: `metadata.name=${q.name}`,
    },
    () => {
      if (!informer.hasSynced()) return;
      met = conditionMet(informer.get(q.info.type.namespaced ? q.namespace : "", q.name), q.want);
      if (met) stop.abort();
    },
    { signal, log: warningLogger((l) => io.stderr.write(l)) },
  );
  if (await informer.waitForSync(signal)) {
    met = conditionMet(informer.get(q.info.type.namespaced ? q.namespace : "", q.name), q.want);
    if (met) stop.abort();
  }
  await new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
  );
  return met;
}

export async function runWait(
  io: Io,
  connect: Connect,
  args: { resource: string; name: string; opts: WaitOptions },
): Promise<void> {
  const info = resolveResource(args.resource);
  const want = parseFor(args.opts.for);
  const timeoutMs = parseDuration(args.opts.timeout, "--timeout");
  const conn = connect();
  const namespace = args.opts.namespace ?? conn.namespace;
  const met = await watchUntil(io, conn, { info, name: args.name, namespace, want, timeoutMs });
  const obj = { metadata: { name: args.name } };
  if (met) {
    io.stdout.write(`${nameOf(info, obj)} ${describeWant(want)}\n`);
    return;
  }
  if (io.signal.aborted) throw new CliError("interrupted", { exitCode: 130 });
  throw new CliError(
    `timed out waiting for the ${want.kind === "delete" ? "deletion" : "condition"} on ${info.type.plural}/${args.name}`,
  );
}
