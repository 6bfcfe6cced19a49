/**
 * Versions through the ARM frontend move along the update graph, against the real service
 * apiserver and a catalog of four minors: a cluster's version moves to a newer z-stream or the
 * next minor, never past one; node pools run at most two minors behind their cluster, and the
 * cluster may not move on while one would fall further behind. Each refusal is a 400 naming
 * properties.version.id and saying what to do first.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  startFrontendFixture,
  type FrontendFixture,
} from "../support/frontend-fixture.ts";

const service = clientFor("service");
const sub = randomUUID();
const rg = "rg-upgrades";
let fixture: FrontendFixture;
let catalog: { name: string; remove(): Promise<void> };

const RELEASES = ["4.17.40", "4.18.22", "4.19.7", "4.20.2"];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

beforeAll(async () => {
  catalog = await tempNamespace(service, "upgrades-catalog");
  const releases = RELEASES.map(
    (v) => `  - version: ${v}\n    channelGroups: [stable]\n    image: release:${v}\n`,
  );
  await service.create(configMapType, {
    metadata: { name: CATALOG_CONFIGMAP, namespace: catalog.name },
    data: { [CATALOG_KEY]: `releases:\n${releases.join("")}` },
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
