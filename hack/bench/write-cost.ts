/**
 * What one write costs the apiserver that answers it, by kind: why the lifecycle's create is
 * several times its floor. The floor makes as many writes as the region, each a merge patch of a
 * small ConfigMap; the region's are status writes of its custom resources. Here copies of the
 * region's own objects (taken at Ready) get their status written as their controllers write it
 * (a condition's message changed, by server-side apply), and beside them, on the same apiserver
 * and at the same concurrency, the floor's write and a ConfigMap holding the same bytes as the
 * object: size apart from the custom-resource path (JSON, schema and CEL validation).
 * Run with the region's processes stopped: nothing but this client writes, and nothing reacts.
 */
import { ConfigMapResource, NamespaceResource } from "../../operators/api/core.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { sampleProcess } from "./usage.ts";

const NAMESPACE = "bench-write-cost";
const FIELD_MANAGER = "bench-write-cost";

/** One object of a kind, as the region left it at Ready, and the apiserver it lives on. */
export interface WriteSample {
  client: KubeClient;
  /** The apiserver's pid, whose CPU time is the cost. */
  pid: number;
  type: ResourceType;
  object: KubeObject & { status?: { conditions?: Array<{ message?: string }> } };
}

export interface WriteCost {
  /** "HcpCluster status (service)". */
  name: string;
  /** The object's JSON as stored, managedFields included. */
  bytes: number;
  writes: number;
  cpuMsPerWrite: number;
  /** On the same apiserver: the floor's write, and the same bytes as a ConfigMap. */
  floorCpuMsPerWrite: number;
  sameBytesCpuMsPerWrite: number;
}

export interface WriteCostOptions {
  /** Copies of each sample; each gets `rounds` writes. */
  copies: number;
  rounds: number;
  concurrency: number;
}

/** `task(0)` … `task(count - 1)`, at most `concurrency` at once, in order of start. */
export async function inParallel(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** Apiserver CPU milliseconds per write of `count × rounds` writes made by `write`. */
async function cpuPerWrite(
  pid: number,
  opts: WriteCostOptions,
  write: (i: number, round: number) => Promise<unknown>,
): Promise<number> {
  const before = (await sampleProcess(pid)).cpuSeconds;
  for (let round = 1; round <= opts.rounds; round++)
    await inParallel(opts.copies, opts.concurrency, (i) => write(i, round));
  const after = (await sampleProcess(pid)).cpuSeconds;
  return Math.round(((after - before) * 1e5) / (opts.copies * opts.rounds)) / 100;
}

/** The sample's status with its first condition's message changed: a real change, as a controller makes. */
export function changedStatus(status: NonNullable<WriteSample["object"]["status"]>, round: number): unknown {
  const [first, ...rest] = status.conditions ?? [];
  if (!first) throw new Error("a status without conditions has nothing to change");
  return {
    ...status,
    conditions: [{ ...first, message: `${first.message ?? ""} (write ${round})` }, ...rest],
  };
}

/** A copy's metadata: the sample's labels and annotations, none of its identity. */
function copyOf(sample: WriteSample, name: string): KubeObject {
  const { labels, annotations } = sample.object.metadata;
  const body: KubeObject = { ...sample.object };
  delete (body as { status?: unknown }).status;
  return {
    ...body,
    metadata: { name, ...(sample.type.namespaced && { namespace: NAMESPACE }), labels, annotations },
  };
}

async function measure(sample: WriteSample, opts: WriteCostOptions, tag: string): Promise<WriteCost> {
  const { client, pid, type } = sample;
  const status = sample.object.status;
  if (!status?.conditions?.length) throw new Error(`${type.kind} sample has no conditions to change`);
  const name = (i: number): string => `${tag}-${i}`;
  const ref = (i: number) => ({ name: name(i), namespace: NAMESPACE });
  await inParallel(opts.copies, opts.concurrency, async (i) => {
    await client.create(type, copyOf(sample, name(i)));
    // The first status write takes the fields over for this manager; not counted.
    await client.apply(
      type,
      { metadata: ref(i), status },
      { subresource: "status", fieldManager: FIELD_MANAGER },
    );
  });
  const cpuMsPerWrite = await cpuPerWrite(pid, opts, (i, round) =>
    client.apply(
      type,
      { metadata: ref(i), status: changedStatus(status, round) },
      { subresource: "status", fieldManager: FIELD_MANAGER },
    ),
  );
  const stored = await client.get(type, name(0), NAMESPACE);
  const bytes = Buffer.byteLength(JSON.stringify(stored));

  const small = (i: number) => ({ name: `${tag}-floor-${i}`, namespace: NAMESPACE });
  const same = (i: number) => ({ name: `${tag}-bytes-${i}`, namespace: NAMESPACE });
  const { status: storedStatus, ...storedRest } = stored as KubeObject & { status?: unknown };
  await inParallel(opts.copies, opts.concurrency, async (i) => {
    await client.create(ConfigMapResource, { metadata: small(i), data: { n: "0" } });
    await client.create(ConfigMapResource, {
      metadata: same(i),
      data: { object: JSON.stringify(storedRest), status: JSON.stringify(storedStatus) },
    });
  });
  const floorCpuMsPerWrite = await cpuPerWrite(pid, opts, (i, round) =>
    client.mergePatch(ConfigMapResource, small(i), { data: { n: String(round) } }),
  );
  const sameBytesCpuMsPerWrite = await cpuPerWrite(pid, opts, (i, round) =>
    client.mergePatch(ConfigMapResource, same(i), {
      data: { status: JSON.stringify(changedStatus(status, round)) },
    }),
  );
  return {
    name: `${type.kind} status (${client.cluster})`,
    bytes,
    writes: opts.copies * opts.rounds,
    cpuMsPerWrite,
    floorCpuMsPerWrite,
    sameBytesCpuMsPerWrite,
  };
}

/** Each sample's write cost, one kind after another, in a namespace of the bench's own. */
export async function writeCosts(samples: WriteSample[], opts: WriteCostOptions): Promise<WriteCost[]> {
  const out: WriteCost[] = [];
  const prepared = new Set<KubeClient>();
  for (const [k, sample] of samples.entries()) {
    if (!prepared.has(sample.client)) {
      await sample.client.createIfAbsent(NamespaceResource, { metadata: { name: NAMESPACE } });
      prepared.add(sample.client);
    }
    out.push(await measure(sample, opts, `w${k}`));
  }
  return out;
}
