import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { load } from "js-yaml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NOW, readySnapshot } from "../../test/support/hcpctl-objects.ts";
import { directorySource, prepareDirectory, writeGather, type GatherIndex, type Gathered } from "./gather.ts";
import type { ClusterSnapshot } from "./model.ts";
import { plain } from "./paint.ts";
import { renderTree } from "./render-tree.ts";
import { assemble } from "./snapshot.ts";
import { buildTree } from "./tree.ts";

const PULL_SECRET = '{"auths":{"quay.io":{"auth":"Z2F0aGVyLXRlc3QtdG9rZW4tOTE3Cg=="}}}';
const GATHERED_AT = "2026-09-01T12:00:00Z";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hcpctl-gather-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function gathered(): Gathered {
  const snapshot = readySnapshot();
  snapshot.works[0]!.spec!.workload!.manifests![1]!["data"] = {
    ".dockerconfigjson": Buffer.from(PULL_SECRET).toString("base64"),
  };
  const event = {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "demo.1", namespace: "customer" },
    involvedObject: { kind: "HcpCluster", name: "demo", uid: snapshot.cluster.metadata.uid },
    reason: "Ready",
    message: "The cluster is ready on mgmt-1",
  };
  return {
    snapshot,
    snapshotAt: GATHERED_AT,
    events: new Map([[snapshot.cluster.metadata.uid!, [event]]]),
    eventsAt: GATHERED_AT,
    source: { server: "https://127.0.0.1:6443", context: "service" },
  };
}

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

/** The snapshot as the live source gives it (assembled: pools and works in name order). */
function live(): ClusterSnapshot {
  const s = readySnapshot();
  return assemble({
    cluster: s.cluster,
    pools: s.nodePools,
    externalAuths: s.externalAuths,
    managementCluster: s.managementCluster,
    works: s.works,
  });
}

const text = (snapshot = live(), now = NOW) =>
  renderTree(buildTree(snapshot, new Date(now)), {
    now,
    showConditions: { all: true },
    grouping: true,
    paint: plain,
  });

describe("writeGather", () => {
  it("writes each object and its events, and an index that lists every file", async () => {
    const index = await writeGather(dir, gathered());
    const uid = readySnapshot().cluster.metadata.uid!;
    expect(await filesUnder(dir)).toEqual(
      [
        "events/hcpcluster-customer-demo.yaml",
        "externalauths/entra.yaml",
        "hcpcluster.yaml",
        "index.yaml",
        "managementcluster.yaml",
        `manifestworks/mgmt-1/${uid}-batch.yaml`,
        `manifestworks/mgmt-1/${uid}-workers.yaml`,
        `manifestworks/mgmt-1/${uid}.yaml`,
        "nodepools/batch.yaml",
        "nodepools/workers.yaml",
      ].sort(),
    );
    const onDisk = load(await readFile(join(dir, "index.yaml"), "utf8")) as GatherIndex;
    expect(onDisk).toEqual(JSON.parse(JSON.stringify(index)));
    expect(onDisk).toMatchObject({
      kind: "MustGather",
      cluster: { name: "demo", namespace: "customer", uid },
      source: { server: "https://127.0.0.1:6443", context: "service" },
      gatheredAt: GATHERED_AT,
    });
    expect(onDisk.files.map((f) => f.path).sort()).toEqual(
      (await filesUnder(dir)).filter((f) => f !== "index.yaml"),
    );
    expect(onDisk.files.find((f) => f.path === "hcpcluster.yaml")).toEqual({
      path: "hcpcluster.yaml",
      role: "HcpCluster",
      what: "HcpCluster customer/demo",
      gatheredAt: GATHERED_AT,
    });
    expect(onDisk.files.find((f) => f.path === `manifestworks/mgmt-1/${uid}.yaml`)?.redacted).toEqual([
      '.spec.workload.manifests[1].data[".dockerconfigjson"]',
    ]);
    expect(onDisk.files.find((f) => f.role === "Events")?.what).toBe("Events of HcpCluster customer/demo");
  });

  it("leaves no secret value in any file", async () => {
    await writeGather(dir, gathered());
    const all = await Promise.all((await filesUnder(dir)).map((f) => readFile(join(dir, f), "utf8")));
    const base64 = Buffer.from(PULL_SECRET).toString("base64");
    for (const content of all) {
      expect(content).not.toContain(base64);
      expect(content).not.toContain("Z2F0aGVyLXRlc3QtdG9rZW4tOTE3Cg");
    }
    expect(all.join("\n")).toContain(`<redacted: ${PULL_SECRET.length} bytes>`);
  });
});

describe("directorySource", () => {
  it("gives back the snapshot, so the tree is the one the live objects drew, aged as of the gathering", async () => {
    await writeGather(dir, gathered());
    const read = await directorySource(dir).read("demo");
    expect(read.readAt).toBe(Date.parse(GATHERED_AT));
    expect(text(read.snapshot, read.readAt)).toBe(text());
    expect(buildTree(read.snapshot, new Date(NOW))).toEqual(buildTree(live(), new Date(NOW)));
  });

  it.each([
    [["other"], 'hcpcluster "other" is not in --from DIR: it holds customer/demo'],
    [["demo", "prod"], 'hcpcluster "demo" in namespace "prod" is not in --from DIR: it holds customer/demo'],
  ])("names the cluster it holds when asked for another: %j", async (args, message) => {
    await writeGather(dir, gathered());
    await expect(directorySource(dir).read(args[0]!, args[1])).rejects.toThrow(message.replace("DIR", dir));
  });

  it("says what is wrong with a directory that is not a must-gather", async () => {
    await expect(directorySource(dir).read("demo")).rejects.toThrow(
      `--from ${dir}: no index.yaml: not a must-gather directory (or its gathering did not finish)`,
    );
    await writeFile(join(dir, "index.yaml"), "kind: List\nitems: []\n");
    await expect(directorySource(dir).read("demo")).rejects.toThrow(
      `--from ${dir}: index.yaml is not a must-gather index (kind MustGather with files and cluster)`,
    );
    await writeGather(dir, gathered());
    await writeFile(join(dir, "hcpcluster.yaml"), "spec: [unclosed\n");
    await expect(directorySource(dir).read("demo")).rejects.toThrow(
      `--from ${dir}: hcpcluster.yaml is not YAML:`,
    );
  });
});

describe("prepareDirectory", () => {
  it("takes a new or empty directory, refuses one with files unless forced", async () => {
    await prepareDirectory(join(dir, "new", "nested"), false);
    await prepareDirectory(join(dir, "new", "nested"), false);
    await writeFile(join(dir, "new", "nested", "notes.txt"), "mine");
    await expect(prepareDirectory(join(dir, "new", "nested"), false)).rejects.toThrow(
      `-o ${join(dir, "new", "nested")}: the directory is not empty (1 entries, e.g. notes.txt): name a new or empty one, or pass --force to write into it`,
    );
    await prepareDirectory(join(dir, "new", "nested"), true);
    await expect(prepareDirectory(join(dir, "new", "nested", "notes.txt"), true)).rejects.toThrow(
      "exists and is not a directory",
    );
    await mkdir(join(dir, "empty"));
    await prepareDirectory(join(dir, "empty"), false);
  });
});
