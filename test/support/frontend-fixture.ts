/**
 * The setup every frontend test shares: certificates in a scratch directory, a release catalog,
 * a frontend on a free port of 127.0.0.1 and an ARM client with ARM's client certificate. What
 * differs per test (page size, the headers ARM sends, where the catalog lives) is an option.
 */
import { randomUUID } from "node:crypto";
import { catalogConfigMap } from "../../hack/harness/stack.ts";
import { configMapType } from "../../operators/releases/catalog.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import type { Logger } from "../../operators/runtime/logger.ts";
import type { Registry } from "prom-client";
import type { OperationDeadlines } from "../../operators/frontend/operations/deadlines.ts";
import type { NotificationOptions } from "../../operators/frontend/operations/notification-uri.ts";
import { HcpClusterResource, NodePoolResource } from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { writeSummaryStatus } from "./summary-conditions.ts";
import { namespaceType, scratchDir, tempNamespace } from "./fixtures.ts";
import type { ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { setUpCustomerAzure } from "../../hack/harness/customer-azure.ts";
import type { AzureClients } from "../../operators/azure/clients.ts";
import {
  ArmClient,
  clusterBody,
  clusterPath,
  frontendAzure,
  frontendCerts,
  startTestFrontend,
  type ArmResponse,
  type FrontendCerts,
  type TestFrontend,
} from "./frontend.ts";

export interface FrontendFixtureOptions {
  client: KubeClient;
  /** Prefix of the scratch directory (certificates); ignored when `scratchPath` is given. */
  name: string;
  /** An existing directory for the certificates (kept on stop). */
  scratchPath?: string;
  /** Where the release catalog ConfigMap is; default: a new namespace holding the region's catalog. */
  catalogNamespace?: string;
  /** Items per LIST page. */
  pageSize?: number;
  /** Headers the ARM client sends with every request (tenant, client object ID). */
  headers?: Record<string, string>;
  /** Where the frontend logs; default nowhere. */
  log?: Logger;
  /** Operation deadlines (short ones for tests of them). */
  deadlines?: Partial<OperationDeadlines>;
  /** Hosts an Azure-AsyncNotificationUri may name; default ARM's. */
  notificationHosts?: string[];
  /** The notifier's options: one runs beside the frontend when given. */
  notifier?: NotificationOptions;
  registry?: Registry;
  /**
   * The ARM emulator where creates' customer resources are checked (azure-checks.ts); nothing is
   * checked in Azure without it. A subscription registered through `putSubscription` then gets
   * what `clusterBody` names: its identities and their role assignments.
   */
  arm?: ArmEmulator;
}

export interface FrontendFixture {
  /** The running frontend; `restart` replaces it. */
  fe: TestFrontend;
  /** The ARM client of the running frontend; `restart` replaces it. */
  arm: ArmClient;
  certs: FrontendCerts;
  catalogNamespace: string;
  /** The frontend's Azure clients, when it checks creates against the ARM emulator. */
  azure?: AzureClients;
  /** `PUT /subscriptions/{id}?api-version=2.0` as ARM sends it (with `arm`, a Registered one's customer Azure set up first). */
  putSubscription(
    id: string,
    state: string,
    tenantId?: string,
    properties?: Record<string, unknown>,
  ): Promise<ArmResponse>;
  /**
   * Stops the frontend and starts a new one on the same certificates and catalog; returns a new
   * client for it (with the same headers). The earlier client stays open for its owner to close.
   */
  restart(): Promise<ArmClient>;
  /** Closes the client, stops the frontend, removes the catalog namespace and scratch it made. */
  stop(): Promise<void>;
}

async function catalogIn(
  client: KubeClient,
  given: string | undefined,
): Promise<{ name: string; remove(): Promise<void> }> {
  if (given) return { name: given, remove: () => Promise.resolve() };
  const ns = await tempNamespace(client, "catalog");
  await client.apply(configMapType, await catalogConfigMap(ns.name), { fieldManager: "test" });
  return ns;
}

export async function startFrontendFixture(opts: FrontendFixtureOptions): Promise<FrontendFixture> {
  const scratch = opts.scratchPath
    ? { path: opts.scratchPath, remove: () => Promise.resolve() }
    : await scratchDir(opts.name);
  const catalog = await catalogIn(opts.client, opts.catalogNamespace);
  const certs = await frontendCerts(scratch.path);
  const azure = opts.arm ? await frontendAzure(opts.arm, opts.registry) : undefined;
  const start = (): Promise<TestFrontend> =>
    startTestFrontend({
      client: opts.client,
      certs,
      catalogNamespace: catalog.name,
      ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
      ...(opts.log ? { log: opts.log } : {}),
      ...(opts.deadlines ? { deadlines: opts.deadlines } : {}),
      ...(opts.notificationHosts ? { notificationHosts: opts.notificationHosts } : {}),
      ...(opts.notifier ? { notifier: opts.notifier } : {}),
      ...(opts.registry ? { registry: opts.registry } : {}),
      ...(azure ? { azure } : {}),
    });
  const connect = (fe: TestFrontend): Promise<ArmClient> =>
    ArmClient.create(fe.url, certs, opts.headers ? { headers: opts.headers } : {});
  const fe = await start();
  const fixture: FrontendFixture = {
    fe,
    arm: await connect(fe),
    certs,
    catalogNamespace: catalog.name,
    ...(azure ? { azure } : {}),
    async putSubscription(id, state, tenantId = randomUUID(), properties = {}) {
      if (azure && state === "Registered") await setUpCustomerAzure(azure, id, clusterBody(id), { tenantId });
      return fixture.arm.send("PUT", `/subscriptions/${id}`, {
        apiVersion: "2.0",
        body: { state, registrationDate: new Date().toISOString(), properties: { ...properties, tenantId } },
      });
    },
    async restart() {
      await fixture.fe.stop();
      fixture.fe = await start();
      fixture.arm = await connect(fixture.fe);
      return fixture.arm;
    },
    async stop() {
      await fixture.arm.close();
      await fixture.fe.stop();
      await catalog.remove();
      await scratch.remove();
    },
  };
  return fixture;
}

/**
 * Removes what a test's subscription left on the service cluster: its clusters and node pools
 * (nothing reconciles them here, so no finalizer holds them) and its namespace.
 */
export async function removeSubscription(client: KubeClient, subscriptionId: string): Promise<void> {
  const ns = subscriptionNamespace(subscriptionId);
  for (const t of [HcpClusterResource, NodePoolResource]) {
    const list = await client.listAll(t, { namespace: ns }).catch(() => ({ items: [] }));
    for (const o of list.items) await client.delete(t, { name: o.metadata.name ?? "", namespace: ns });
  }
  await client.delete(namespaceType, { name: ns });
}

/** An ARM cluster by its coordinates; its CR is where the frontend puts it. */
export interface ArmClusterRef {
  sub: string;
  rg: string;
  name: string;
}

/** Marks the cluster's current generation Ready, as the cluster controller would (none runs here). */
export function settleCluster(client: KubeClient, c: ArmClusterRef): Promise<void> {
  const ref = { name: clusterCRName(c.rg, c.name), namespace: subscriptionNamespace(c.sub) };
  return writeSummaryStatus(client, HcpClusterResource, ref, { state: "ready" });
}

/** Creates a cluster through ARM (a valid body unless given) and settles it, so that it takes updates and pools. */
export async function createSettledCluster(
  arm: ArmClient,
  client: KubeClient,
  c: ArmClusterRef,
  request: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<void> {
  const created = await arm.send("PUT", clusterPath(c.sub, c.rg, c.name), {
    body: request.body ?? clusterBody(c.sub),
    ...(request.headers ? { headers: request.headers } : {}),
  });
  if (created.status !== 201)
    throw new Error(`creating cluster ${c.name}: ${created.status} ${JSON.stringify(created.body)}`);
  await settleCluster(client, c);
}
