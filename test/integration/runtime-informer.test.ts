/**
 * The informer against real kube-apiservers: list+watch, pagination, indexers, relist after a
 * forced 410 Gone (etcd compaction while the informer was cut off), and watch restart after the
 * apiserver itself is restarted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer, type ApiServer } from "../../hack/harness/apiserver.ts";
import { compactEtcd } from "../../hack/harness/etcd.ts";
import { Informer } from "../../operators/runtime/informer.ts";
import { KubeClient, type KubeObject } from "../../operators/runtime/kube.ts";
import {
  clientFor,
  configMap,
  configMapType,
  eventually,
  scratchDir,
  secretType,
  tempNamespace,
} from "../support/fixtures.ts";
import { kubeConfigAt, region } from "../support/region.ts";

function clientOf(api: ApiServer): KubeClient {
  return new KubeClient(api.name, kubeConfigAt(api.kubeconfigPath));
}

interface Recorded {
  adds: string[];
  updates: string[];
  deletes: string[];
}

/** An informer that retries quickly, so outages in these tests cost seconds, not the default backoff. */
function quickInformer(client: KubeClient, namespace: string): Informer {
  return new Informer({ client, type: configMapType, namespace, backoff: { initialMs: 200, maxMs: 1_000 } });
}

function record(informer: Informer): Recorded {
  const r: Recorded = { adds: [], updates: [], deletes: [] };
  informer.addEventHandler({
    onAdd: (o) => r.adds.push(o.metadata.name ?? ""),
    onUpdate: (_old, o) => r.updates.push(o.metadata.name ?? ""),
    onDelete: (o) => r.deletes.push(o.metadata.name ?? ""),
  });
  return r;
}

describe("informer on the service cluster", () => {
  const client = clientFor("service");
  let ns: Awaited<ReturnType<typeof tempNamespace>>;
  const stop = new AbortController();

  beforeAll(async () => {
    ns = await tempNamespace(client, "informer");
  });
  afterAll(async () => {
    stop.abort();
    await ns.remove();
  });

  it("lists in pages, watches changes and keeps indexes current", async () => {
    for (let i = 0; i < 7; i++)
      await client.create(configMapType, configMap(ns.name, `cm-${i}`, { team: i % 2 ? "odd" : "even" }));
    const informer = new Informer<KubeObject & { data?: Record<string, string> }>({
      client,
      type: configMapType,
      namespace: ns.name,
      pageSize: 2,
      indexers: { team: (o) => [o.data?.team ?? ""] },
    });
    const seen = record(informer);
    void informer.run(stop.signal);
    expect(await informer.waitForSync(stop.signal)).toBe(true);
    expect(
      informer
        .list(ns.name)
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `cm-${i}`));
    expect(informer.byIndex("team", "odd")).toHaveLength(3);

    await client.mergePatch(configMapType, { name: "cm-1", namespace: ns.name }, { data: { team: "even" } });
    await client.delete(configMapType, { name: "cm-2", namespace: ns.name });
    await client.create(configMapType, configMap(ns.name, "cm-new", { team: "odd" }));

    await eventually(
      "watch events",
      () => seen.deletes.includes("cm-2") && seen.adds.includes("cm-new") && seen.updates.includes("cm-1"),
    );
    expect(informer.get(ns.name, "cm-2")).toBeUndefined();
    expect(
      informer
        .byIndex("team", "odd")
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["cm-3", "cm-5", "cm-new"]);
    // Counts follow moves between values and deletions, as the lists do.
    expect([informer.countByIndex("team", "odd"), informer.countByIndex("team", "even")]).toEqual([3, 4]);
    expect(informer.relistCount).toBe(1);
  });
});

describe("informer across apiserver outages", () => {
  let dir: Awaited<ReturnType<typeof scratchDir>>;
  let primary: ApiServer;
  let secondary: ApiServer;
  const stop = new AbortController();

  beforeAll(async () => {
    dir = await scratchDir("outage");
    const common = { assetsDir: region().assetsDir, etcdUrl: region().etcdUrl, workDir: dir.path };
    const etcdPrefix = `/outage-${process.pid}-${Date.now()}/registry`;
    // Without the watch cache a watch reads etcd directly, so compaction yields a true 410.
    [primary, secondary] = await Promise.all([
      startApiServer({ ...common, name: "primary", etcdPrefix, extraArgs: ["--watch-cache=false"] }),
      startApiServer({ ...common, name: "secondary", etcdPrefix }),
    ]);
  });
  afterAll(async () => {
    stop.abort();
    await Promise.all([primary?.stop(), secondary?.stop()]);
    await dir?.remove();
  });

  it("relists after a forced 410 and delivers the deletes it missed", async () => {
    const writer = clientOf(secondary);
    const ns = await tempNamespace(writer, "gone");
    for (const name of ["keep", "doomed"]) await writer.create(configMapType, configMap(ns.name, name));
    const informer = quickInformer(clientOf(primary), ns.name);
    const seen = record(informer);
    void informer.run(stop.signal);
    await informer.waitForSync(stop.signal);
    const staleVersion = informer.resourceVersion;

    // Cut the informer off, change the world behind its back, and compact history away.
    await primary.process.stop();
    await writer.delete(configMapType, { name: "doomed", namespace: ns.name });
    await writer.create(configMapType, configMap(ns.name, "born"));
    await writer.create(secretType, {
      metadata: { name: "noise", namespace: ns.name },
      stringData: { a: "b" },
    });
    const compactedAt = await compactEtcd(region().etcdUrl);
    expect(compactedAt).toBeGreaterThan(Number(staleVersion));
    await primary.restart();

    await eventually(
      "relist after 410",
      () => informer.relistCount === 2 && seen.deletes.includes("doomed") && seen.adds.includes("born"),
      60_000,
    );
    expect(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["born", "keep"]);
    await ns.remove();
  });

  it("resumes watching after the apiserver restarts", async () => {
    const client = clientOf(secondary);
    const ns = await tempNamespace(client, "restart");
    const informer = quickInformer(client, ns.name);
    const seen = record(informer);
    void informer.run(stop.signal);
    await informer.waitForSync(stop.signal);
    const watchesBefore = informer.watchCount;

    await secondary.restart();
    await client.create(configMapType, configMap(ns.name, "after-restart"));

    await eventually("event after restart", () => seen.adds.includes("after-restart"), 60_000);
    expect(informer.watchCount).toBeGreaterThan(watchesBefore);
    await ns.remove();
  });
});
