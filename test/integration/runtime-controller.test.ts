/**
 * The runtime assembled as a real controller would use it, against the service cluster: cluster
 * registry → shared informer → source → workqueue → controller → server-side apply with the
 * controller's field manager, events, metrics and probes served by the Manager under a Lease.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Applier } from "../../operators/runtime/apply.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { Controller, reconcilerFunc } from "../../operators/runtime/controller.ts";
import { isNotFound } from "../../operators/runtime/errors.ts";
import { EventRecorder, eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { leaseType } from "../../operators/runtime/leaderelection.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";
import { Manager } from "../../operators/runtime/manager.ts";
import { enqueueForObject } from "../../operators/runtime/source.ts";
import { clientFor, configMap, configMapType, eventually, tempNamespace } from "../support/fixtures.ts";
import { kubeConfigFor } from "../support/region.ts";

type ConfigMap = KubeObject & { data?: Record<string, string> };

describe("a controller built on the runtime", () => {
  const client = clientFor("service");
  let ns: Awaited<ReturnType<typeof tempNamespace>>;
  const stop = new AbortController();
  let manager: Manager;
  let running: Promise<void>;
  let failuresLeft = 1;

  beforeAll(async () => {
    ns = await tempNamespace(client, "ctrl");
    const registry = new ClusterRegistry(silentLogger);
    const service = registry.add("service", kubeConfigFor("service"));
    const informer = service.informer<ConfigMap>(configMapType, { namespace: ns.name });
    const applier = new Applier(service.client, "mirror-controller");
    const events = new EventRecorder(service.client, "mirror-controller");

    // Mirrors every ConfigMap "src-x" into "mirror-x"; fails once on "src-flaky" to show the retry.
    const reconciler = reconcilerFunc(async (_ctx, req) => {
      if (!req.name.startsWith("src-")) return {};
      if (req.name === "src-flaky" && failuresLeft-- > 0) throw new Error("injected failure");
      const src = informer.get(req.namespace, req.name);
      const mirrorName = req.name.replace(/^src-/, "mirror-");
      if (!src) {
        await service.client.delete(configMapType, { name: mirrorName, namespace: req.namespace });
        return {};
      }
      await applier.apply(configMapType, configMap(req.namespace, mirrorName, src.data ?? {}));
      await events.event(src, "Normal", "Mirrored", `mirrored into ${mirrorName}`);
      return {};
    });
    const controller = new Controller({
      name: "mirror",
      reconciler,
      log: silentLogger,
      maxConcurrentReconciles: 2,
    });
    enqueueForObject(informer, controller);

    manager = new Manager({
      httpAddress: "127.0.0.1:0",
      log: silentLogger,
      leaderElection: {
        client: service.client,
        namespace: ns.name,
        name: "mirror-leader",
        identity: "test-replica",
      },
    });
    manager.add({ start: (signal) => controller.start(signal) });
    manager.addReadyCheck("informers-synced", () => registry.hasSynced());
    running = manager.start(stop.signal).finally(() => registry.stopAll());
    await eventually("manager listening", () => manager.address() !== undefined);
  });

  afterAll(async () => {
    stop.abort();
    await running;
    await ns.remove();
  });

  const url = (path: string): string => `http://127.0.0.1:${manager.address()?.port}${path}`;

  it("reconciles create, update and delete into the mirrored object with its field manager", async () => {
    await client.create(configMapType, configMap(ns.name, "src-a", { color: "blue" }));
    await eventually("mirror created", async () => (await readData("mirror-a"))?.color === "blue");
    await client.mergePatch(
      configMapType,
      { name: "src-a", namespace: ns.name },
      { data: { color: "green" } },
    );
    await eventually("mirror updated", async () => (await readData("mirror-a"))?.color === "green");
    const mirror = await client.get<
      ConfigMap & { metadata: { managedFields?: Array<{ manager: string; operation: string }> } }
    >(configMapType, "mirror-a", ns.name);
    expect(mirror.metadata.managedFields?.map((f) => [f.manager, f.operation])).toContainEqual([
      "mirror-controller",
      "Apply",
    ]);
    await client.delete(configMapType, { name: "src-a", namespace: ns.name });
    await eventually("mirror deleted", async () => (await readData("mirror-a")) === undefined);
  });

  it("retries a failed reconcile with backoff and counts it in the metrics", async () => {
    await client.create(configMapType, configMap(ns.name, "src-flaky", { n: "1" }));
    await eventually("mirror after retry", async () => (await readData("mirror-flaky"))?.n === "1");
    const metrics = await (await fetch(url("/metrics"))).text();
    expect(metrics).toMatch(/controller_runtime_reconcile_errors_total\{controller="mirror"\} [1-9]/);
    expect(metrics).toMatch(
      /controller_runtime_reconcile_total\{controller="mirror",result="success"\} [1-9]/,
    );
    expect(metrics).toMatch(/workqueue_retries_total\{name="mirror",controller="mirror"\} [1-9]/);
    expect(metrics).toContain("controller_runtime_reconcile_time_seconds_bucket");
  });

  it("records events and serves probes while it holds the lease", async () => {
    await eventually("event recorded", async () => {
      const list = await client.list<KubeObject & { reason?: string }>(eventType, { namespace: ns.name });
      return list.items.some((e) => e.reason === "Mirrored");
    });
    expect((await fetch(url("/healthz"))).status).toBe(200);
    const ready = await fetch(url("/readyz"));
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain("[+]informers-synced ok");
    expect((await fetch(url("/readyz/informers-synced"))).status).toBe(200);
    expect((await fetch(url("/readyz/nope"))).status).toBe(404);
    expect(manager.isLeader()).toBe(true);
  });

  it("drains and releases the lease on shutdown", async () => {
    stop.abort();
    await running;
    const lease = await client.get<KubeObject & { spec: { holderIdentity?: string } }>(
      leaseType,
      "mirror-leader",
      ns.name,
    );
    expect(lease.spec.holderIdentity ?? "").toBe("");
  });

  async function readData(name: string): Promise<Record<string, string> | undefined> {
    try {
      return (await client.get<ConfigMap>(configMapType, name, ns.name)).data ?? {};
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
});
