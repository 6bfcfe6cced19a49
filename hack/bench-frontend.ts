/**
 * ARM frontend latency under a steady load: PUT (cluster creates, each a new resource) and then GET
 * of those clusters, each sent open-loop at a fixed rate (default 200 requests per second) over
 * HTTPS with ARM's client certificate, against a real service apiserver with no controllers. The
 * latency of a request is measured from its scheduled send time, so a stall is not hidden by the
 * requests that were never sent during it.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { HcpClusterResource } from "../operators/api/v1alpha1/index.ts";
import { subscriptionNamespace } from "../operators/frontend/names.ts";
import {
  ArmClient,
  clusterBody,
  clusterPath,
  frontendCerts,
  startTestFrontend,
} from "../test/support/frontend.ts";
import { configMapType } from "../operators/releases/catalog.ts";
import { KubeClient } from "../operators/runtime/kube.ts";
import { KubeConfig } from "@kubernetes/client-node";
import type { Region } from "./harness/region.ts";
import { catalogConfigMap } from "./harness/stack.ts";

export interface PhaseResult {
  /** Milliseconds per request, ascending. */
  latenciesMs: number[];
  errors: number;
  achievedRps: number;
}

export interface FrontendBenchResult {
  put: PhaseResult;
  get: PhaseResult;
}

/** Sends `count` requests at `rps`, not waiting for one before the next. */
async function openLoop(
  count: number,
  rps: number,
  send: (i: number) => Promise<boolean>,
): Promise<PhaseResult> {
  const interval = 1000 / rps;
  const started = performance.now();
  const latencies: number[] = [];
  let errors = 0;
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      send(i).then(
        (ok) => {
          latencies.push(performance.now() - due);
          if (!ok) errors++;
        },
        () => void errors++,
      ),
    );
  }
  await Promise.all(inflight);
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { latenciesMs: latencies, errors, achievedRps: count / seconds };
}

export async function benchFrontend(region: Region, count: number, rps = 200): Promise<FrontendBenchResult> {
  const dir = await mkdtemp(join(region.workDir, "bench-frontend-"));
  const kc = new KubeConfig();
  kc.loadFromFile(region.clusters.find((c) => c.role === "service")!.kubeconfigPath);
  const client = new KubeClient("service", kc);
  const catalogNs = "hcp-bench-catalog";
  await client
    .create(
      { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
      {
        metadata: { name: catalogNs },
      },
    )
    .catch(() => undefined);
  await client.apply(configMapType, await catalogConfigMap(catalogNs), { fieldManager: "bench" });
  const certs = await frontendCerts(dir);
  const fe = await startTestFrontend({ client, certs, catalogNamespace: catalogNs });
  const arm = await ArmClient.create(fe.url, certs);
  const sub = randomUUID();
  try {
    await arm.send("PUT", `/subscriptions/${sub}`, {
      apiVersion: "2.0",
      body: { state: "Registered", registrationDate: new Date().toISOString() },
    });
    const body = clusterBody(sub);
    const path = (i: number): string => clusterPath(sub, `bench-${i % 10}`, `cluster-${i}`);
    const put = await openLoop(
      count,
      rps,
      async (i) => (await arm.send("PUT", path(i), { body })).status === 201,
    );
    const get = await openLoop(count, rps, async (i) => (await arm.send("GET", path(i))).status === 200);
    return { put, get };
  } finally {
    await arm.close();
    await fe.stop();
    const ns = subscriptionNamespace(sub);
    const list = await client.listAll(HcpClusterResource, { namespace: ns });
    for (const o of list.items)
      await client.delete(HcpClusterResource, { name: o.metadata.name!, namespace: ns });
    await rm(dir, { recursive: true, force: true });
  }
}
