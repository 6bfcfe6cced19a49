/**
 * The update graph of one channel group at one instant (catalog.ts gives the edge rule): which
 * releases are reachable from a release and by which hops, and why an edge is refused. Worked out
 * in numbers once per release and kept, per catalog, for as long as the same ends of life have
 * passed: every cluster reconcile plans on it (plan.ts).
 */
import type { ChannelGroup } from "../api/v1alpha1/meta.ts";
import { compareVersions, parseVersion, skippedMinor, type Release, type ReleaseCatalog } from "./catalog.ts";
import type { Hold, Hop } from "./plan.ts";

const dateOf = (timestamp: string): string => timestamp.slice(0, 10);

/** A release of the group with what its edges are judged by, worked out once. */
interface Node {
  release: Release;
  major: number;
  minor: number;
  patch: number;
  /** Past its end of life at the graph's instant: no edge leads to it. */
  ended: boolean;
  /** upgradesFrom as a set; undefined: the minor rule alone. */
  from?: ReadonlySet<string>;
}

type Parsed = readonly [number, number, number];

/** major.minor.patch as numbers (a major.minor as patch 0); undefined when it is neither. */
function parsed(version: string): Parsed | undefined {
  const [major, minor, patch = 0] = parseVersion(version) ?? [];
  return major === undefined || minor === undefined ? undefined : [major, minor, patch];
}

/** The edge rule in numbers: newer, the same major, the same or the next minor, not ended, listed. */
function hasEdge(from: Parsed, fromVersion: string, to: Node): boolean {
  if (to.ended || to.major !== from[0] || (to.from && !to.from.has(fromVersion))) return false;
  if (to.minor === from[1]) return to.patch > from[2];
  return to.minor === from[1] + 1;
}

/** Graphs by catalog (a catalog object is never changed: a new ConfigMap makes a new one). */
const graphs = new WeakMap<ReleaseCatalog, Map<string, UpdateGraph>>();

/** One channel group's graph at one instant. */
export class UpdateGraph {
  readonly group: ChannelGroup;
  /** The group's releases, newest first. */
  readonly releases: readonly Release[];
  readonly #catalog: ReleaseCatalog;
  readonly #now: number;
  readonly #nodes: readonly Node[];
  /** explore's answers, by the release it starts from. */
  readonly #reach = new Map<string, Map<string, string>>();

  constructor(catalog: ReleaseCatalog, group: ChannelGroup, now: number) {
    this.#catalog = catalog;
    this.group = group;
    this.#now = now;
    this.releases = catalog.releases.filter((r) => r.channelGroups.includes(group));
    this.#nodes = this.releases.flatMap((release) => {
      const [major, minor, patch] = parsed(release.version) ?? [];
      if (major === undefined || minor === undefined || patch === undefined) return [];
      const ended = this.endedOn(release) !== undefined;
      const from = release.upgradesFrom ? new Set(release.upgradesFrom) : undefined;
      return [{ release, major, minor, patch, ended, ...(from ? { from } : {}) }];
    });
  }

  /**
   * The graph of a group at `now`, shared while no end of life passes: the same catalog and the
   * same ends of life passed give the same edges, so what explore found is kept.
   */
  static of(catalog: ReleaseCatalog, group: ChannelGroup, now: number): UpdateGraph {
    const passed = catalog.releases.filter(
      (r) => r.endOfLifeTimestamp && Date.parse(r.endOfLifeTimestamp) <= now,
    );
    const key = `${group}/${passed.length}`;
    let byKey = graphs.get(catalog);
    if (!byKey) graphs.set(catalog, (byKey = new Map<string, UpdateGraph>()));
    let graph = byKey.get(key);
    if (!graph) byKey.set(key, (graph = new UpdateGraph(catalog, group, now)));
    return graph;
  }

  /** The group's release of that exact version. */
  release(version: string): Release | undefined {
    return this.releases.find((r) => r.version === version);
  }

  /** The release of that version in any group: what a cluster already runs needs only its image. */
  known(version: string): Release | undefined {
    return this.#catalog.releases.find((r) => r.version === version);
  }

  /** When the release's end of life passed, if it has. */
  endedOn(r: Release): string | undefined {
    const eol = r.endOfLifeTimestamp;
    return eol !== undefined && Date.parse(eol) <= this.#now ? dateOf(eol) : undefined;
  }

  /** Why the graph has no edge from `from` to `to`, or undefined when it has one. */
  edgeRefusal(from: string, to: Release): Hold | undefined {
    if (compareVersions(to.version, from) <= 0)
      return { reason: "DowngradeRefused", message: `${to.version} is not newer than ${from}` };
    const skip = skippedMinor(from, to.version);
    if (skip)
      return {
        reason: "UpgradeSkipsMinor",
        message: `${to.version} cannot be reached from ${from}: ${skip}`,
      };
    const ended = this.endedOn(to);
    if (ended)
      return {
        reason: "EndOfLife",
        message: `OpenShift ${to.version} reached its end of life on ${ended}: no cluster moves to it`,
      };
    if (to.upgradesFrom && !to.upgradesFrom.includes(from))
      return {
        reason: "NoUpdateEdge",
        message: `the update graph of channel group ${this.group} has no edge from ${from} to ${to.version} (it upgrades from ${to.upgradesFrom.join(", ") || "no release: new clusters only"})`,
      };
    return undefined;
  }

  /**
   * Every release reachable from `from`, each with the release before it on a shortest path.
   * Breadth first, newest neighbours first: of the shortest paths, the one through newer releases.
   */
  explore(from: string): Map<string, string> {
    const known = this.#reach.get(from);
    if (known) return known;
    const before = new Map<string, string>();
    let frontier = [from];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const at of frontier)
        for (const n of this.#unseenSuccessors(at, from, before)) {
          before.set(n.release.version, at);
          next.push(n.release.version);
        }
      frontier = next;
    }
    this.#reach.set(from, before);
    return before;
  }

  #unseenSuccessors(at: string, from: string, seen: Map<string, string>): Node[] {
    const p = parsed(at);
    if (!p) return [];
    return this.#nodes.filter(
      (n) => n.release.version !== from && !seen.has(n.release.version) && hasEdge(p, at, n),
    );
  }

  /** The hops from `from` to `to` along the graph; undefined when none leads there. */
  path(from: string, to: string): Hop[] | undefined {
    if (from === to) return [];
    const before = this.explore(from);
    if (!before.has(to)) return undefined;
    const hops: Hop[] = [];
    for (let at = to; at !== from; at = before.get(at) ?? from) {
      const release = this.release(at);
      if (!release) return undefined;
      hops.unshift({ from: before.get(at) ?? from, to: release });
    }
    return hops;
  }
}
