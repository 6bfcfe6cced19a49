/**
 * The must-gather directory: one YAML file per object (redacted, redact.ts), the events of each
 * object beside them, and `index.yaml`, written last, which lists every file, what it is and when
 * it was read. The same directory read back is a ClusterSource, so `describe --from DIR` draws the
 * tree the live cluster gave.
 *
 *   index.yaml
 *   hcpcluster.yaml
 *   nodepools/<name>.yaml
 *   externalauths/<name>.yaml
 *   managementcluster.yaml
 *   manifestworks/<namespace>/<name>.yaml
 *   events/<kind>-<name>.yaml          an EventList per object that has events
 */
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { load } from "js-yaml";
import type { KubeObject } from "../api/meta/v1.ts";
import type { ExternalAuth, HcpCluster, ManagementCluster, NodePool } from "../api/v1alpha1/index.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import { CliError } from "./errors.ts";
import type { ClusterSnapshot } from "./model.ts";
import { toYaml } from "./output.ts";
import { redact } from "./redact.ts";
import { assemble } from "./snapshot.ts";
import type { ClusterSource } from "./source.ts";

export const INDEX_FILE = "index.yaml";

export type GatherRole =
  "HcpCluster" | "NodePool" | "ExternalAuth" | "ManagementCluster" | "ManifestWork" | "Events";

export interface GatheredFile {
  /** Relative to the directory. */
  path: string;
  role: GatherRole;
  /** What the file holds, in words: "HcpCluster customer/demo", "Events of ManifestWork mgmt-1/…". */
  what: string;
  /** When its content was read from the service cluster (RFC 3339). */
  gatheredAt: string;
  /** Where secret values were replaced, if anywhere. */
  redacted?: string[];
}

export interface GatherIndex {
  apiVersion: "hcpctl.hcp.aro.dev/v1alpha1";
  kind: "MustGather";
  cluster: { name: string; namespace: string; uid?: string };
  /** The API server the objects were read from. */
  source: { server: string; context: string };
  /** When gathering began (RFC 3339); describe --from shows ages as of this time. */
  gatheredAt: string;
  redaction: string;
  files: GatheredFile[];
}

/** What was read, with when. */
export interface Gathered {
  snapshot: ClusterSnapshot;
  /** When the snapshot's objects were read (RFC 3339). */
  snapshotAt: string;
  /** Each object's events, keyed by the object's uid. */
  events: ReadonlyMap<string, readonly KubeObject[]>;
  eventsAt: string;
  source: GatherIndex["source"];
}

export const REDACTION_POLICY =
  "Secret data and stringData values, and every string under a key naming a secret (password, secret, token, private key, API key, credentials, kubeconfig, docker config), replaced by <redacted: N bytes>";

/** The directory must be new or empty; with `force`, anything that is a directory will do. */
export async function prepareDirectory(dir: string, force: boolean): Promise<void> {
  const found = await stat(dir).catch(() => undefined);
  if (found && !found.isDirectory()) throw new CliError(`-o ${dir}: exists and is not a directory`);
  if (found && !force) {
    const entries = await readdir(dir);
    if (entries.length > 0)
      throw new CliError(
        `-o ${dir}: the directory is not empty (${entries.length} entries, e.g. ${entries.sort()[0] ?? ""}): name a new or empty one, or pass --force to write into it`,
      );
  }
  await mkdir(dir, { recursive: true });
}

/** A path component from a Kubernetes name (never a separator or "..", whatever the server sent). */
const safe = (name: string | undefined): string =>
  (name ?? "").replace(/[/\\]/g, "_").replace(/^\.+/, "_") || "_";

interface Entry {
  path: string;
  role: GatherRole;
  what: string;
  content: unknown;
  gatheredAt: string;
}

function objectEntries(g: Gathered): Entry[] {
  const s = g.snapshot;
  const at = g.snapshotAt;
  const ref = (o: KubeObject): string =>
    o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ""}` : (o.metadata.name ?? "");
  const entries: Entry[] = [
    {
      path: "hcpcluster.yaml",
      role: "HcpCluster",
      what: `HcpCluster ${ref(s.cluster)}`,
      content: s.cluster,
      gatheredAt: at,
    },
    ...s.nodePools.map((p): Entry => ({
      path: `nodepools/${safe(p.metadata.name)}.yaml`,
      role: "NodePool",
      what: `NodePool ${ref(p)}`,
      content: p,
      gatheredAt: at,
    })),
    ...s.externalAuths.map((a): Entry => ({
      path: `externalauths/${safe(a.metadata.name)}.yaml`,
      role: "ExternalAuth",
      what: `ExternalAuth ${ref(a)}`,
      content: a,
      gatheredAt: at,
    })),
    ...s.works.map((w): Entry => ({
      path: `manifestworks/${safe(w.metadata.namespace)}/${safe(w.metadata.name)}.yaml`,
      role: "ManifestWork",
      what: `ManifestWork ${ref(w)}, with the status and feedback its agent carried back`,
      content: w,
      gatheredAt: at,
    })),
  ];
  const mc = s.managementCluster;
  if (mc)
    entries.push({
      path: "managementcluster.yaml",
      role: "ManagementCluster",
      what: `ManagementCluster ${ref(mc)}`,
      content: mc,
      gatheredAt: at,
    });
  return entries;
}

function eventEntries(g: Gathered): Entry[] {
  const s = g.snapshot;
  const objects: KubeObject[] = [
    s.cluster,
    ...s.nodePools,
    ...s.externalAuths,
    ...(s.managementCluster ? [s.managementCluster] : []),
    ...s.works,
  ];
  return objects.flatMap((o) => {
    const events = g.events.get(o.metadata.uid ?? "") ?? [];
    if (events.length === 0) return [];
    const kind = o.kind ?? "Object";
    const where = o.metadata.namespace ? `${safe(o.metadata.namespace)}-` : "";
    return [
      {
        path: `events/${kind.toLowerCase()}-${where}${safe(o.metadata.name)}.yaml`,
        role: "Events" as const,
        what: `Events of ${kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name ?? ""}`,
        content: { apiVersion: "v1", kind: "EventList", items: events },
        gatheredAt: g.eventsAt,
      },
    ];
  });
}

/** Writes every file, redacted, then the index; returns the index. */
export async function writeGather(dir: string, g: Gathered): Promise<GatherIndex> {
  const files: GatheredFile[] = [];
  for (const e of [...objectEntries(g), ...eventEntries(g)]) {
    const { value, paths } = redact(e.content);
    const file = join(dir, e.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, toYaml(value));
    files.push({
      path: e.path,
      role: e.role,
      what: e.what,
      gatheredAt: e.gatheredAt,
      ...(paths.length > 0 ? { redacted: paths } : {}),
    });
  }
  const c = g.snapshot.cluster.metadata;
  const index: GatherIndex = {
    apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
    kind: "MustGather",
    cluster: { name: c.name ?? "", namespace: c.namespace ?? "", ...(c.uid ? { uid: c.uid } : {}) },
    source: g.source,
    gatheredAt: g.snapshotAt,
    redaction: REDACTION_POLICY,
    files,
  };
  await writeFile(join(dir, INDEX_FILE), toYaml(index));
  return index;
}

async function readYaml(dir: string, path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(dir, path), "utf8");
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (path === INDEX_FILE && code === "ENOENT")
      throw new CliError(
        `--from ${dir}: no ${INDEX_FILE}: not a must-gather directory (or its gathering did not finish)`,
      );
    throw new CliError(
      `--from ${dir}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  try {
    return load(text);
  } catch (err) {
    throw new CliError(
      `--from ${dir}: ${path} is not YAML: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
    );
  }
}

function checkIndex(dir: string, doc: unknown): GatherIndex {
  const index = doc as Partial<GatherIndex> | undefined;
  if (index?.kind !== "MustGather" || !Array.isArray(index.files) || !index.cluster?.name)
    throw new CliError(
      `--from ${dir}: ${INDEX_FILE} is not a must-gather index (kind MustGather with files and cluster)`,
    );
  return index as GatherIndex;
}

export async function readIndex(dir: string): Promise<GatherIndex> {
  return checkIndex(dir, await readYaml(dir, INDEX_FILE));
}

async function objectsOf<T>(dir: string, index: GatherIndex, role: GatherRole): Promise<T[]> {
  const files = index.files.filter((f) => f.role === role);
  return (await Promise.all(files.map((f) => readYaml(dir, f.path)))) as T[];
}

/** A must-gather directory as a source: the cluster it holds, with ages as of its gathering. */
export function directorySource(dir: string): ClusterSource {
  return {
    async read(name, namespace) {
      const index = await readIndex(dir);
      const held = index.cluster;
      if (held.name !== name || (namespace !== undefined && held.namespace !== namespace))
        throw new CliError(
          `hcpcluster "${name}"${namespace ? ` in namespace "${namespace}"` : ""} is not in --from ${dir}: it holds ${held.namespace}/${held.name}`,
        );
      const [clusters, pools, externalAuths, mcs, works] = await Promise.all([
        objectsOf<HcpCluster>(dir, index, "HcpCluster"),
        objectsOf<NodePool>(dir, index, "NodePool"),
        objectsOf<ExternalAuth>(dir, index, "ExternalAuth"),
        objectsOf<ManagementCluster>(dir, index, "ManagementCluster"),
        objectsOf<ManifestWork>(dir, index, "ManifestWork"),
      ]);
      const cluster = clusters[0];
      if (!cluster) throw new CliError(`--from ${dir}: ${INDEX_FILE} lists no HcpCluster file`);
      const snapshot = assemble({ cluster, pools, externalAuths, managementCluster: mcs[0], works });
      return { snapshot, readAt: Date.parse(index.gatheredAt) };
    },
  };
}
