import { PassThrough } from "node:stream";
import tty from "node:tty";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NOW, blockedSnapshot, readySnapshot } from "../../test/support/hcpctl-objects.ts";
import { parseShowConditions } from "./commands/describe.ts";
import type { ClusterTree } from "./model.ts";
import { toJson } from "./output.ts";
import { always, painterFor, plain, type Painter } from "./paint.ts";
import { SHOW_NONE, renderTree, type ShowConditions } from "./render-tree.ts";
import { buildTree } from "./tree.ts";

const ESC = "\u001b[";

function text(
  tree: ClusterTree,
  opts: { showConditions?: ShowConditions; grouping?: boolean; paint?: Painter } = {},
): string {
  return renderTree(tree, {
    now: NOW,
    showConditions: opts.showConditions ?? SHOW_NONE,
    grouping: opts.grouping ?? true,
    paint: opts.paint ?? plain,
  });
}

const ready = (): ClusterTree => buildTree(readySnapshot(), new Date(NOW));
const lines = (s: string): string[] => s.trimEnd().split("\n");
/** The line whose NAME column (tree drawing stripped) starts with `name`. */
const row = (s: string, name: string): string | undefined =>
  lines(s).find((l) => l.replace(/^[│├└─ ]+/, "").startsWith(name));

describe("renderTree", () => {
  it("draws the clusterctl columns and the tree", () => {
    const out = text(ready());
    const [header, root] = lines(out);
    expect(header).toMatch(/^NAME\s+READY\s+SEVERITY\s+REASON\s+SINCE\s+MESSAGE$/);
    expect(root).toMatch(/^HcpCluster\/demo\s+True\s+AsExpected\s+2m\s+The cluster is ready on mgmt-1$/);
    expect(out).toContain("├─ManagementCluster/mgmt-1");
    expect(out).toContain("│ ├─ManifestWork/0b8e1c2a-1111-4aaa-8bbb-000000000001 ");
    expect(out).toContain("└─Azure");
    // Columns line up: every row's READY column starts where the header's does.
    const readyAt = header!.indexOf("READY");
    expect(root![readyAt - 1]).toBe(" ");
    expect(root!.slice(readyAt, readyAt + 4)).toBe("True");
  });

  it("shows a work's generations and how long ago its status was written", () => {
    const work = row(text(ready()), "ManifestWork/0b8e1c2a-1111-4aaa-8bbb-000000000001 ");
    expect(work).toMatch(/True\s+Applied\s+3m20s\s+generation 1 sent, 1 applied; status written 2m10s ago$/);
  });

  it("groups siblings in the same state, and lists each with --grouping=false", () => {
    const grouped = text(ready());
    expect(row(grouped, "2 NodePools")).toMatch(/True\s+AsExpected\s+100s\s+See workers, batch$/);
    expect(row(grouped, "2 Manifests")).toMatch(/See Namespace\/ocm-local-\S+, Secret\/pull-secret$/);
    expect(row(grouped, "5 Azure resources")).toContain(
      "See ResourceGroup/arohcp-demo-managed, DnsZone/demo.hcp.example.com",
    );
    const flat = text(ready(), { grouping: false });
    expect(flat).not.toContain("2 NodePools");
    expect(row(flat, "NodePool/workers")).toMatch(/True\s+AsExpected\s+100s\s+The nodes are ready$/);
    expect(row(flat, "DnsZone/demo.hcp.example.com")).toBeDefined();
  });

  it("does not group siblings whose states differ", () => {
    const s = readySnapshot();
    const ready = s.nodePools[1]!.status!.conditions![0]!;
    Object.assign(ready, {
      status: "False",
      reason: "WaitingForNodes",
      message: "NodesReady: 1 of 2 node(s) ready",
    });
    const out = text(buildTree(s, new Date(NOW)));
    expect(row(out, "NodePool/workers")).toMatch(/True\s+AsExpected/);
    expect(row(out, "NodePool/batch")).toMatch(
      /False\s+Info\s+WaitingForNodes\s+100s\s+NodesReady: 1 of 2 node\(s\) ready$/,
    );
  });

  it("expands the conditions of the kinds --show-conditions names, and only those", () => {
    const out = text(ready(), { showConditions: parseShowConditions("ManifestWork,hostedcluster") });
    expect(row(out, "Published ")).toMatch(
      /True\s+Published\s+8m20s\s+Generation 1 was published to consumer mgmt-1$/,
    );
    expect(row(out, "Progressing ")).toMatch(
      /False\s+AsExpected\s+2m10s\s+HostedCluster is at expected version$/,
    );
    expect(row(out, "DnsZoneReady")).toBeUndefined();
    const all = text(ready(), { showConditions: parseShowConditions("all") });
    expect(row(all, "DnsZoneReady")).toMatch(/True\s+AsExpected/);
    // The row's own condition is the row: not repeated under it.
    expect(lines(all).filter((l) => /^Ready\s/.test(l.replace(/^[│├└─ ]+/, "")))).toEqual([]);
  });

  it("refuses a kind --show-conditions does not know, naming the ones it does", () => {
    expect(() => parseShowConditions("HcpCluster,Machine")).toThrow(
      'unknown kind "Machine" in --show-conditions: expected all or a comma-separated list of HcpCluster, NodePool, ExternalAuth, ManagementCluster, ManifestWork, HostedCluster',
    );
    expect(parseShowConditions("NodePool.hypershift.openshift.io")).toEqual({
      all: false,
      kinds: new Set(["nodepool.hypershift.openshift.io"]),
    });
  });

  it("shows a deletion's finalizers and what blocks it", () => {
    const out = text(buildTree(blockedSnapshot(), new Date(NOW)));
    expect(lines(out)[1]).toMatch(
      /^HcpCluster\/demo\s+False\s+Info\s+Deleting\s+40s\s+Waiting for 1 node pool\(s\) to be deleted: workers$/,
    );
    expect(lines(out)[2]).toMatch(
      /^├─Deleting\s+Info\s+Finalizers\s+40s\s+finalizers: hcp.aro.dev\/cluster$/,
    );
    expect(lines(out)[3]).toMatch(
      /^├─Blocked by NodePool\/workers\s+Warning\s+being deleted; finalizers example.com\/hold$/,
    );
    expect(out).toMatch(
      /│ {3}└─Blocked by Finalizer\/example.com\/hold\s+Warning\s+no controller of this service removes it\n/,
    );
  });

  it("colours by state on a terminal and is plain when piped or with NO_COLOR", () => {
    const coloured = text(ready(), { paint: always });
    expect(row(coloured, "HcpCluster/demo")).toContain(`${ESC}32mTrue${ESC}39m`);
    expect(text(buildTree(blockedSnapshot(), new Date(NOW)), { paint: always })).toContain(
      `${ESC}33mWarning${ESC}39m`,
    );
    expect(text(ready())).not.toContain(ESC);
    // Colour codes do not shift the columns.
    const strip = (s: string): string => s.replaceAll(new RegExp(`${ESC.replace("[", "\\[")}\\d+m`, "g"), "");
    expect(strip(coloured)).toBe(text(ready()));
  });

  describe("with a stream", () => {
    afterEach(() => vi.unstubAllEnvs());
    const terminal = () =>
      Object.assign(new PassThrough(), {
        isTTY: true,
        // The real terminal's colour-depth rule, which reads NO_COLOR and TERM.
        getColorDepth: (env?: NodeJS.ProcessEnv) => tty.WriteStream.prototype.getColorDepth.call({}, env),
      });

    it("colours a terminal, not a pipe, and not a terminal with NO_COLOR", () => {
      vi.stubEnv("FORCE_COLOR", undefined);
      vi.stubEnv("NO_COLOR", undefined);
      vi.stubEnv("TERM", "xterm-256color");
      // Node takes a terminal under CI=… (as CI sets) for one without colour unless it knows the CI.
      vi.stubEnv("CI", undefined);
      expect(text(ready(), { paint: painterFor(terminal()) })).toContain(ESC);
      expect(text(ready(), { paint: painterFor(new PassThrough()) })).not.toContain(ESC);
      vi.stubEnv("NO_COLOR", "1");
      expect(text(ready(), { paint: painterFor(terminal()) })).not.toContain(ESC);
    });
  });

  it("emits the same tree as JSON data", () => {
    const doc = JSON.parse(toJson(ready())) as ClusterTree;
    expect(doc).toMatchObject({
      apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
      kind: "ClusterTree",
      observedAt: "2026-09-01T12:00:00Z",
    });
    expect(doc.root.children.map((c) => `${c.kind}/${c.name}`)).toEqual([
      "/NodePools",
      "/ExternalAuths",
      "ManagementCluster/mgmt-1",
      "/Azure",
    ]);
    // Data is never grouped: both pools are there.
    expect(doc.root.children[0]!.children.map((c) => c.name)).toEqual(["workers", "batch"]);
  });
});
