/**
 * The release catalog: which OpenShift versions the region offers in which channel group, the
 * release image of each, and the update graph between them. It lives in one ConfigMap
 * (`hcp-release-catalog` in the operators' namespace, key `catalog.yaml`) so that SREs add a
 * release with `kubectl apply` and no restart; a CRD would add a kind for what is a flat,
 * read-only list.
 *
 *   releases:
 *     - version: 4.19.9
 *       channelGroups: [stable, fast]
 *       image: quay.io/openshift-release-dev/ocp-release:4.19.9-multi
 *       endOfLifeTimestamp: 2026-12-17T00:00:00Z   # when the version stops being supported
 *       upgradesFrom: [4.19.7, 4.18.22]            # the releases that may move to this one
 *
 * A request for "4.19" resolves to the newest 4.19.z of the channel group; "4.19.7" to exactly
 * that release.
 *
 * The update graph (plan.ts walks it). Its edges are written on the release they lead to, as
 * OpenShift's own release metadata lists the versions a release updates from: `upgradesFrom`
 * names the releases a cluster may move from to this one. As in OpenShift's update service, a
 * channel group's graph is its releases and the edges between them: an edge counts in a group
 * when the release it leads to is in the group (the one it starts from may be any release a
 * cluster runs, in the catalog or no longer). A release without `upgradesFrom` may be reached
 * from every release the minor rule allows (an older z-stream of its minor, or any release of
 * the minor before); an empty list makes a release for new clusters only. Every edge also obeys
 * the minor rule (never backwards, never past the next minor), and no edge leads to a release
 * past its end of life: it is offered neither to new clusters nor as an upgrade, while clusters
 * that run it keep running.
 */
import { load } from "js-yaml";
import { CHANNEL_GROUPS, type ChannelGroup, type VersionSpec } from "../api/v1alpha1/meta.ts";
import type { Cluster } from "../runtime/clusters.ts";
import type { Informer } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { ConfigMapResource } from "../api/core.ts";

export const CATALOG_CONFIGMAP = "hcp-release-catalog";
export const CATALOG_KEY = "catalog.yaml";

export interface Release {
  /** major.minor.patch */
  version: string;
  image: string;
  channelGroups: ChannelGroup[];
  /** RFC 3339, UTC: when the version reaches its end of life (ARM's hcpOpenShiftVersions show it). */
  endOfLifeTimestamp?: string;
  /**
   * The releases (major.minor.patch) a cluster may move from to this one: the update graph's
   * edges into it. Absent: every release the minor rule allows; empty: none (new clusters only).
   */
  upgradesFrom?: string[];
}

/** An entry's end of life: absent, or an RFC 3339 date-time such as 2027-02-17T00:00:00Z. */
function endOfLifeOf(v: unknown): { ok: boolean; value?: string } {
  if (v === undefined) return { ok: true };
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  return typeof v === "string" && rfc3339.test(v) && !Number.isNaN(Date.parse(v))
    ? { ok: true, value: v }
    : { ok: false };
}

export type Resolution =
  | { ok: true; release: Release }
  | { ok: false; reason: "UnknownVersion" | "CatalogUnavailable"; message: string };

/** Parses "4.19.7" or "4.19" into numbers; undefined when it is neither. */
export function parseVersion(id: string): number[] | undefined {
  if (!/^\d+\.\d+(\.\d+)?$/.test(id)) return undefined;
  return id.split(".").map(Number);
}

/** Negative when a < b; compares as many parts as both have (so "4.19" equals "4.19.7"). */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a) ?? [];
  const pb = parseVersion(b) ?? [];
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The most minor versions a node pool may run behind its control plane (OpenShift's skew policy). */
export const MAX_NODE_POOL_MINOR_SKEW = 2;

const majorMinor = (version: string): [number, number] | undefined => {
  const [major, minor] = parseVersion(version) ?? [];
  return major === undefined || minor === undefined ? undefined : [major, minor];
};

/**
 * Why a control plane on `from` may not move to `to`, or undefined when it may: ARO HCP moves a
 * cluster to a newer z-stream of its minor or to the next minor, never past one (a downgrade is
 * refused by its own rule).
 */
export function skippedMinor(from: string, to: string): string | undefined {
  const f = majorMinor(from);
  const t = majorMinor(to);
  if (!f || !t || compareVersions(t.join("."), f.join(".")) <= 0) return undefined;
  const [fromMajor, fromMinor] = f;
  if (t[0] === fromMajor && t[1] === fromMinor + 1) return undefined;
  const next = `${fromMajor}.${fromMinor + 1}`;
  return `a cluster on ${f.join(".")} moves one minor version at a time: to ${next} first, then on to ${t.join(".")}`;
}

/** Why node pools on `pool` cannot run under a control plane on `controlPlane`, or undefined. */
export function poolTooFarBehind(pool: string, controlPlane: string): string | undefined {
  const p = majorMinor(pool);
  const cp = majorMinor(controlPlane);
  if (!p || !cp || compareVersions(pool, controlPlane) >= 0) return undefined;
  if (p[0] === cp[0] && cp[1] - p[1] <= MAX_NODE_POOL_MINOR_SKEW) return undefined;
  return `nodes on ${p.join(".")} may run at most ${MAX_NODE_POOL_MINOR_SKEW} minor versions behind their control plane on ${cp.join(".")}`;
}

/** A release's version as written: YAML reads 4.20 as a number. */
const versionText = (raw: unknown): string =>
  typeof raw === "string" || typeof raw === "number" ? String(raw) : "";

/** Why an entry's version, image or channel groups cannot be read, if they cannot. */
function requiredFieldProblem(
  e: Record<string, unknown>,
  version: string,
  where: string,
): string | undefined {
  const image = e["image"];
  const groups = e["channelGroups"] ?? ["stable"];
  if (parseVersion(version)?.length !== 3) return `${where}.version "${version}" is not major.minor.patch`;
  if (typeof image !== "string" || image === "") return `${where}.image is missing for ${version}`;
  if (!Array.isArray(groups) || !groups.every((g) => CHANNEL_GROUPS.includes(g as ChannelGroup)))
    return `${where}.channelGroups must be a list of ${CHANNEL_GROUPS.join(", ")}`;
  return undefined;
}

/**
 * One entry of the catalog, or what is wrong with it (`where` names it). A bad end of life is
 * named too, but the release stays offered without one: clusters on it must not lose it for that.
 */
function readRelease(entry: unknown, where: string): { release?: Release; problem?: string } {
  const e = (entry ?? {}) as Record<string, unknown>;
  const version = versionText(e["version"]);
  const problem = requiredFieldProblem(e, version, where);
  if (problem) return { problem };
  const from = upgradesFromOf(e["upgradesFrom"], version);
  if (!from.ok) return { problem: `${where}.upgradesFrom of ${version} ${from.problem}` };
  const eol = endOfLifeOf(e["endOfLifeTimestamp"]);
  const release: Release = {
    version,
    image: e["image"] as string,
    channelGroups: (e["channelGroups"] ?? ["stable"]) as ChannelGroup[],
    ...(eol.value ? { endOfLifeTimestamp: eol.value } : {}),
    ...(from.value ? { upgradesFrom: from.value } : {}),
  };
  if (eol.ok) return { release };
  return {
    release,
    problem: `${where}.endOfLifeTimestamp of ${version} is not an RFC 3339 date-time such as 2027-02-17T00:00:00Z; the release is offered without one`,
  };
}

/**
 * A release's edges: absent, or a list of major.minor.patch versions each older than it and at
 * most one minor behind (an edge the minor rule forbids would never be taken). A bad list skips
 * the release: offered without its edges, it would be reachable from everything.
 */
function upgradesFromOf(
  v: unknown,
  version: string,
): { ok: true; value?: string[] } | { ok: false; problem: string } {
  if (v === undefined || v === null) return { ok: true };
  if (!Array.isArray(v)) return { ok: false, problem: "must be a list of versions such as [4.19.7]" };
  const listed = v.map(versionText);
  const bad = listed.find((f) => parseVersion(f)?.length !== 3);
  if (bad !== undefined) return { ok: false, problem: `lists "${bad}", not major.minor.patch` };
  const refused = listed.find((f) => compareVersions(f, version) >= 0 || skippedMinor(f, version));
  if (refused !== undefined)
    return {
      ok: false,
      problem: `lists ${refused}: an edge leads to a newer release at most one minor ahead`,
    };
  return { ok: true, value: [...new Set(listed)] };
}

export class ReleaseCatalog {
  /** Newest first. */
  readonly releases: readonly Release[];
  /** Entries the parser skipped or read in part, with why; shown in conditions rather than failing everything. */
  readonly problems: readonly string[];
  /** Why there is no catalog at all (its ConfigMap is missing): every request is refused with it. */
  readonly unavailable: string | undefined;

  constructor(releases: Release[], problems: string[] = [], unavailable?: string) {
    this.releases = releases;
    this.problems = problems;
    this.unavailable = unavailable;
  }

  /** Reads the ConfigMap's catalog.yaml; an entry with a bad field is skipped and named in problems. */
  static parse(text: string | undefined): ReleaseCatalog {
    if (!text) return new ReleaseCatalog([], [`the ConfigMap has no ${CATALOG_KEY}`]);
    let doc: unknown;
    try {
      doc = load(text);
    } catch (err) {
      return new ReleaseCatalog([], [`${CATALOG_KEY} is not YAML: ${(err as Error).message}`]);
    }
    const entries = (doc as { releases?: unknown } | null)?.releases;
    if (!Array.isArray(entries)) return new ReleaseCatalog([], [`${CATALOG_KEY} has no releases list`]);
    const releases: Release[] = [];
    const problems: string[] = [];
    entries.forEach((entry: unknown, i) => {
      const { release, problem } = readRelease(entry, `releases[${i}]`);
      if (release) releases.push(release);
      if (problem) problems.push(problem);
    });
    releases.sort((a, b) => compareVersions(b.version, a.version));
    return new ReleaseCatalog(releases, problems);
  }

  /** The release a version request means, or why there is none. */
  resolve(spec: VersionSpec): Resolution {
    if (this.unavailable !== undefined)
      return { ok: false, reason: "CatalogUnavailable", message: this.unavailable };
    const group = spec.channelGroup ?? "stable";
    const inGroup = this.releases.filter((r) => r.channelGroups.includes(group));
    const match = inGroup.find(
      (r) =>
        r.version === spec.id || (parseVersion(spec.id)?.length === 2 && r.version.startsWith(`${spec.id}.`)),
    );
    if (match) return { ok: true, release: match };
    const offered = [...new Set(inGroup.map((r) => r.version))].reverse().join(", ") || "none";
    return {
      ok: false,
      reason: "UnknownVersion",
      message: `OpenShift ${spec.id} is not offered in channel group ${group}; offered: ${offered}`,
    };
  }
}

/** What a controller gets while the ConfigMap is missing: every request is refused with that reason. */
export function unavailableCatalog(why: string): ReleaseCatalog {
  return new ReleaseCatalog([], [], why);
}

export const configMapType = ConfigMapResource;

export interface CatalogSource {
  /** The catalog as the ConfigMap says now (parsed again only when it changed). */
  current(): ReleaseCatalog;
  /** The ConfigMaps of the namespace, for controllers that requeue when the catalog changes. */
  informer: Informer<KubeObject>;
}

/** The catalog read through the shared informer of the operators' namespace ConfigMaps. */
export function catalogSource(cluster: Cluster, namespace: string): CatalogSource {
  const informer = cluster.informer<KubeObject>(configMapType, { namespace });
  let cached: { rv: string; parsed: ReleaseCatalog } | undefined;
  return {
    informer,
    current() {
      const cm = informer.get(namespace, CATALOG_CONFIGMAP);
      if (!cm)
        return unavailableCatalog(
          `the release catalog ConfigMap ${namespace}/${CATALOG_CONFIGMAP} does not exist`,
        );
      const rv = cm.metadata.resourceVersion ?? "";
      if (cached?.rv !== rv)
        cached = {
          rv,
          parsed: ReleaseCatalog.parse((cm["data"] as Record<string, string> | undefined)?.[CATALOG_KEY]),
        };
      return cached.parsed;
    },
  };
}
