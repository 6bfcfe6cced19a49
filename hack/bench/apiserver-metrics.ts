/**
 * Requests an apiserver served, by verb and resource, from its own `apiserver_request_total`
 * counter; and etcd's database size and compaction through its HTTP gateway. The benchmark reads
 * both before and after a phase and reports the difference.
 */
import type { KubeClient } from "../../operators/runtime/kube.ts";

/** "VERB resource[/subresource]" → count. */
export type RequestCounts = Map<string, number>;

const REQUEST_LINE = /^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$/;

function labelsOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/(\w+)="([^"]*)"/g)) out[m[1] ?? ""] = m[2] ?? "";
  return out;
}

export async function requestCounts(client: KubeClient): Promise<RequestCounts> {
  return requestCountsIn(await client.text("/metrics"));
}

export function requestCountsIn(text: string): RequestCounts {
  const counts: RequestCounts = new Map();
  for (const line of text.split("\n")) {
    const m = REQUEST_LINE.exec(line);
    if (!m) continue;
    const l = labelsOf(m[1] ?? "");
    if (!l["resource"] || l["verb"] === "WATCH") continue;
    const key = `${l["verb"]} ${l["resource"]}${l["subresource"] ? `/${l["subresource"]}` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
  }
  return counts;
}

/** A counter's totals so far in Prometheus text, by one of its labels, summed over the others. */
export function totalsBy(text: string, metric: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} ([0-9.e+]+)$`, "gm"))) {
    const key = labelsOf(m[1] ?? "")[label];
    if (key !== undefined) out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

/** "VERB resource[/subresource]" → the apiserver's own time spent serving those requests (its latency histogram). */
export type RequestSeconds = Map<string, { seconds: number; count: number }>;

const DURATION_LINE = /^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} ([0-9.e+]+)$/;

export async function requestSeconds(client: KubeClient): Promise<RequestSeconds> {
  const text = await client.text("/metrics");
  const out: RequestSeconds = new Map();
  for (const line of text.split("\n")) {
    const m = DURATION_LINE.exec(line);
    if (!m) continue;
    const l = labelsOf(m[2] ?? "");
    if (!l["resource"] || l["verb"] === "WATCH") continue;
    const key = `${l["verb"]} ${l["resource"]}${l["subresource"] ? `/${l["subresource"]}` : ""}`;
    const entry = out.get(key) ?? { seconds: 0, count: 0 };
    if (m[1] === "sum") entry.seconds += Number(m[3]);
    else entry.count += Number(m[3]);
    out.set(key, entry);
  }
  return out;
}

/** Mean milliseconds per request of each kind between two readings. */
export function meanMs(after: RequestSeconds, before: RequestSeconds): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, a] of after) {
    const b = before.get(k) ?? { seconds: 0, count: 0 };
    const count = a.count - b.count;
    if (count > 0) out.set(k, Math.round(((a.seconds - b.seconds) / count) * 1000 * 10) / 10);
  }
  return out;
}

export function difference(after: RequestCounts, before: RequestCounts): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

export function merge(...all: RequestCounts[]): RequestCounts {
  const out: RequestCounts = new Map();
  for (const counts of all) for (const [k, v] of counts) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

const WRITE_VERBS = new Set(["POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"]);

export function writes(counts: RequestCounts): number {
  let n = 0;
  for (const [k, v] of counts) if (WRITE_VERBS.has(k.split(" ")[0] ?? "")) n += v;
  return n;
}

/**
 * By resource: the writes an apiserver answered with success, and the writes its storage layer
 * made to etcd for them (`etcd_requests_total`). A write that changes nothing (an apply of what is
 * already there) is answered but never stored, so the difference counts them. Not exact for every
 * resource: a DELETECOLLECTION is one request and many etcd deletes, and the apiserver stores a
 * few objects of its own without a request.
 */
export type StoredWrites = Map<string, { answered: number; stored: number }>;

const ETCD_LINE = /^etcd_requests_total\{([^}]*)\} ([0-9.e+]+)$/;
const ETCD_WRITES = new Set(["create", "update", "delete"]);

export function storedWritesIn(metrics: string): StoredWrites {
  const out: StoredWrites = new Map();
  for (const line of metrics.split("\n")) {
    const sample = writeSample(line);
    if (!sample) continue;
    const [resource, field, count] = sample;
    const entry = out.get(resource) ?? { answered: 0, stored: 0 };
    entry[field] += count;
    out.set(resource, entry);
  }
  return out;
}

type WriteSample = [resource: string, field: "answered" | "stored", count: number];

/** A successful write request, or an etcd write, of one resource; undefined for any other line. */
function writeSample(line: string): WriteSample | undefined {
  const request = REQUEST_LINE.exec(line);
  if (request) return answeredSample(labelsOf(request[1] ?? ""), Number(request[2]));
  const stored = ETCD_LINE.exec(line);
  return stored ? storedSample(labelsOf(stored[1] ?? ""), Number(stored[2])) : undefined;
}

function answeredSample(l: Record<string, string>, count: number): WriteSample | undefined {
  const ok = WRITE_VERBS.has(l["verb"] ?? "") && l["code"]?.startsWith("2");
  return l["resource"] && ok ? [l["resource"], "answered", count] : undefined;
}

function storedSample(l: Record<string, string>, count: number): WriteSample | undefined {
  return l["resource"] && ETCD_WRITES.has(l["operation"] ?? "")
    ? [l["resource"], "stored", count]
    : undefined;
}

/** Per resource, writes answered but not stored between two readings (those above zero). */
export function unstoredWrites(after: StoredWrites[], before: StoredWrites[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [i, a] of after.entries())
    for (const [resource, { answered, stored }] of a) {
      const b = before[i]?.get(resource) ?? { answered: 0, stored: 0 };
      const unstored = answered - b.answered - (stored - b.stored);
      if (unstored > 0) out.set(resource, (out.get(resource) ?? 0) + unstored);
    }
  return out;
}

async function etcdPost<T>(etcdUrl: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${etcdUrl}${path}`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** etcd's database size in bytes (what the quota counts). */
export async function etcdDbSize(etcdUrl: string): Promise<number> {
  const status = await etcdPost<{ dbSize?: string }>(etcdUrl, "/v3/maintenance/status", {});
  return Number(status.dbSize ?? 0);
}

/** Compacts to the current revision and defragments, so the size says what is stored now. */
export async function compactAndDefrag(etcdUrl: string): Promise<void> {
  const range = await etcdPost<{ header?: { revision?: string } }>(etcdUrl, "/v3/kv/range", {
    key: Buffer.from("/").toString("base64"),
  });
  const revision = range.header?.revision;
  if (revision) await etcdPost(etcdUrl, "/v3/kv/compaction", { revision, physical: true });
  await etcdPost(etcdUrl, "/v3/maintenance/defragment", {});
}
