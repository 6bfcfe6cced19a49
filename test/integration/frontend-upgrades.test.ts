/**
 * Versions through the ARM frontend move along the update graph, against the real service
 * apiserver and a catalog of four minors: a cluster's version moves to a newer z-stream or the
 * next minor, never past one, only along an edge the graph has and never to a release past its
 * end of life (nor is a new cluster made on one); node pools run at most two minors behind their
 * cluster, and the cluster may not move on while one would fall further behind. Each refusal is a
 * 400 naming properties.version.id and saying why, in the words the cluster controller would hold
 * the upgrade with.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { CATALOG_CONFIGMAP, CATALOG_KEY, configMapType } from "../../operators/releases/catalog.ts";
import { clientFor, tempNamespace } from "../support/fixtures.ts";
import {
  clusterBody,
  clusterPath,
  nodePoolBody,
  nodePoolPath,
  type ArmResponse,
} from "../support/frontend.ts";
import {
  createSettledCluster,
  removeSubscription,
  settleCluster,
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const rg = "rg-upgrades";
let fixture: FrontendFixture;
let catalog: { name: string; remove(): Promise<void> };

const RELEASES = ["4.17.40", "4.18.22", "4.19.7", "4.20.2"];
/** A month ago: the catalog's ends of life are relative to now, never the calendar. */
const ENDED = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString().replace(/\.\d+Z$/, "Z");
/**
 * The update graph's other releases: 4.16 past its end of life; 4.18.30 a newer patch; 4.19.8 past
 * its end of life (withdrawn); 4.21.0 reached only from 4.20.9, which no cluster here runs.
 */
const GRAPH = `  - {version: 4.16.9, image: "release:4.16.9", endOfLifeTimestamp: "${ENDED}"}
  - {version: 4.18.30, image: "release:4.18.30"}
  - {version: 4.19.8, image: "release:4.19.8", endOfLifeTimestamp: "${ENDED}"}
  - {version: 4.21.0, image: "release:4.21.0", upgradesFrom: [4.20.9]}
`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

beforeAll(async () => {
  catalog = await tempNamespace(service, "upgrades-catalog");
  const releases = RELEASES.map(
    (v) => `  - version: ${v}\n    channelGroups: [stable]\n    image: release:${v}\n`,
  );
  await service.create(configMapType, {
    metadata: { name: CATALOG_CONFIGMAP, namespace: catalog.name },
    data: { [CATALOG_KEY]: `releases:\n${releases.join("")}${GRAPH}` },
  });
  fixture = await startFrontendFixture({
    client: service,
    name: "frontend-upgrades",
    catalogNamespace: catalog.name,
  });
  expect((await fixture.putSubscription(sub, "Registered")).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
  await removeSubscription(service, sub);
  await catalog?.remove();
});

function refusal(r: ArmResponse): string {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  const error = (r.body as Json).error as Json;
  expect(error.target).toBe("properties.version.id");
  return String(error.message);
}

/** A cluster on `version`, settled as its controller would leave it. */
const settledCluster = (name: string, version: string): Promise<void> =>
  createSettledCluster(fixture.arm, service, { sub, rg, name }, { body: clusterBody(sub, { version }) });

describe("the update graph through ARM", () => {
  it("refuses a cluster upgrade that skips a minor, naming the one to take first; takes the next minor", async () => {
    await settledCluster("skip", "4.18");
    const path = clusterPath(sub, rg, "skip");
    const skipped = await fixture.arm.send("PATCH", path, {
      body: { properties: { version: { id: "4.20" } } },
    });
    expect(refusal(skipped)).toContain("to 4.19 first");
    const next = await fixture.arm.send("PATCH", path, { body: { properties: { version: { id: "4.19" } } } });
    expect(next.status, JSON.stringify(next.body)).toBe(202);
  });

  it("keeps a node pool within two minors of its cluster", async () => {
    await settledCluster("skew", "4.20");
    const pool = nodePoolPath(sub, rg, "skew", "old");
    const tooOld = await fixture.arm.send("PUT", pool, { body: nodePoolBody({ version: "4.17" }) });
    expect(refusal(tooOld)).toContain("at most 2 minor versions behind");
    const created = await fixture.arm.send("PUT", pool, { body: nodePoolBody({ version: "4.18" }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });

  it("refuses a cluster upgrade that would leave a node pool three minors behind", async () => {
    await settledCluster("behind", "4.19");
    const pool = nodePoolPath(sub, rg, "behind", "old");
    const created = await fixture.arm.send("PUT", pool, { body: nodePoolBody({ version: "4.17" }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const up = await fixture.arm.send("PATCH", clusterPath(sub, rg, "behind"), {
      body: { properties: { version: { id: "4.20" } } },
    });
    expect(refusal(up)).toMatch(/upgrade them first.*node pool old/);
  });
});

describe("the update graph's edges and ends of life through ARM", () => {
  it("refuses a new cluster on a release past its end of life, naming the date and what is offered", async () => {
    const r = await fixture.arm.send("PUT", clusterPath(sub, rg, "ended"), {
      body: clusterBody(sub, { version: "4.16" }),
    });
    expect(refusal(r)).toBe(
      `OpenShift 4.16 reached its end of life on ${ENDED.slice(0, 10)}: no new cluster runs it and no cluster moves to it; offered in channel group stable: 4.17, 4.18, 4.19, 4.20, 4.21`,
    );
  });

  it("refuses an upgrade into a release past its end of life", async () => {
    await settledCluster("withdrawn", "4.19.7");
    const up = await fixture.arm.send("PATCH", clusterPath(sub, rg, "withdrawn"), {
      body: { properties: { version: { id: "4.19.8" } } },
    });
    expect(refusal(up)).toBe(
      `OpenShift 4.19.8 reached its end of life on ${ENDED.slice(0, 10)}: no cluster moves to it`,
    );
  });

  it("refuses an upgrade the update graph has no edge for, naming the edges it has", async () => {
    await settledCluster("noedge", "4.20");
    const up = await fixture.arm.send("PATCH", clusterPath(sub, rg, "noedge"), {
      body: { properties: { version: { id: "4.21" } } },
    });
    expect(refusal(up)).toBe(
      "no release of 4.21 in channel group stable can be reached from 4.20.2: the update graph of channel group stable has no edge from 4.20.2 to 4.21.0 (it upgrades from 4.20.9)",
    );
  });

  it("keeps the upgrade policy a kubectl user set through ARM updates, which cannot name it", async () => {
    await settledCluster("policy", "4.19.7");
    const ref = { name: clusterCRName(rg, "policy"), namespace: subscriptionNamespace(sub) };
    await service.mergePatch(HcpClusterResource, ref, {
      spec: { version: { upgradePolicy: "AutomaticPatch" } },
    });
    await settleCluster(service, { sub, rg, name: "policy" });
    const tagged = await fixture.arm.send("PATCH", clusterPath(sub, rg, "policy"), {
      body: { tags: { a: "b" } },
    });
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(202);
    const cr = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    expect(cr.spec.version).toMatchObject({ id: "4.19.7", upgradePolicy: "AutomaticPatch" });
  });

  it("keeps the backups' settings and a restore an SRE asked for through ARM updates, which cannot name them", async () => {
    await settledCluster("kept", "4.19.7");
    const ref = { name: clusterCRName(rg, "kept"), namespace: subscriptionNamespace(sub) };
    const cr = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    const clusterID = cr.metadata.uid ?? "";
    await service.replace(HcpClusterResource, { ...cr, status: { ...cr.status, clusterID } }, "status");
    const restore = { backupName: `${clusterID}-backup-20261128080000` };
    await service.mergePatch(HcpClusterResource, ref, {
      spec: { backup: { paused: true, retentionHours: 24 }, restore },
    });
    await settleCluster(service, { sub, rg, name: "kept" });
    const tagged = await fixture.arm.send("PATCH", clusterPath(sub, rg, "kept"), {
      body: { tags: { a: "b" } },
    });
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(202);
    const after = await service.get<HcpCluster>(HcpClusterResource, ref.name, ref.namespace);
    expect(after.spec.backup).toMatchObject({ paused: true, retentionHours: 24 });
    expect(after.spec.restore).toEqual(restore);
  });

  it("lets a new node pool run what an automatic patch moved the control plane to, not beyond", async () => {
    await settledCluster("patched", "4.18.22");
    const ref = { name: clusterCRName(rg, "patched"), namespace: subscriptionNamespace(sub) };
    await service.mergePatch(HcpClusterResource, ref, {
      spec: { version: { upgradePolicy: "AutomaticPatch" } },
    });
    await settleCluster(service, { sub, rg, name: "patched" });
    // As the cluster controller leaves it once it has moved the control plane to 4.18.30.
    await service.mergePatch(HcpClusterResource, ref, { status: { desiredVersion: "4.18.30" } }, "status");
    const ok = await fixture.arm.send("PUT", nodePoolPath(sub, rg, "patched", "np"), {
      body: nodePoolBody({ version: "4.18.30" }),
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const ahead = await fixture.arm.send("PUT", nodePoolPath(sub, rg, "patched", "ahead"), {
      body: nodePoolBody({ version: "4.19.7" }),
    });
    expect(refusal(ahead)).toBe(
      "Node pool version 4.19.7 is newer than its cluster's version 4.18.30; a node pool cannot run ahead of its control plane",
    );
  });
});
