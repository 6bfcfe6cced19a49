/**
 * Real API servers for chosen hosted clusters (issue 36): for each HostedCluster of a management
 * cluster whose name is in the set, once the simulator has made its control plane's root CA, a
 * kube-apiserver (hosted-apiserver.ts) serving with a certificate from that CA and trusting the
 * control plane's break-glass signers (customer and SRE), kept in step with their trust bundles so
 * that a rotation refuses the old certificates. Its `host:port` goes onto the HostedCluster
 * (SERVED_ENDPOINT_ANNOTATION), which the simulator publishes as the control plane's endpoint, so
 * the HcpCluster's apiURL reaches it. Level-triggered: every look starts what is missing, syncs the
 * bundles and stops what is gone.
 */
import { writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { ConfigMapResource, NamespaceResource } from "../../operators/api/core.ts";
import {
  controlPlaneNamespaceName,
  HostedClusterResource,
  type HostedCluster,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { ACCESS_LEVEL_GROUPS } from "../../operators/api/v1alpha1/accesssession.ts";
import type { Cluster } from "../../operators/runtime/clusters.ts";
import {
  Controller,
  type ReconcileContext,
  type Request,
  type Result,
} from "../../operators/runtime/controller.ts";
import type { Informer } from "../../operators/runtime/informer.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { silentLogger, type Logger } from "../../operators/runtime/logger.ts";
import type { Runnable } from "../../operators/runtime/manager.ts";
import { enqueueForObject } from "../../operators/runtime/source.ts";
import { apiServerHost } from "../hypershift-simulator/release.ts";
import { SERVED_ENDPOINT_ANNOTATION } from "../hypershift-simulator/status.ts";
import { bundleOf, ensureRootCA, ensureSigner, SIGNER_SECRETS } from "../hypershift-simulator/signer.ts";
import { HOSTED_VIEW_ROLE, startHostedApiServer, type HostedApiServer } from "./hosted-apiserver.ts";

/** How often a running API server's trusted signers are compared with their bundles. */
const SYNC_MS = 1_000;

export interface HostedApisOptions {
  /** The management cluster. */
  cluster: Cluster;
  /** HostedCluster names (the HcpClusters' DNS prefixes) to serve for real. */
  hostedClusters: readonly string[];
  assetsDir: string;
  etcdUrl: string;
  workDir: string;
  log?: Logger;
}

export interface ServedApi {
  url: string;
  auditLogPath: string;
}

type DataObject = KubeObject & { data?: Record<string, string> };

export class HostedApis implements Runnable {
  readonly needLeaderElection = false;
  readonly #opts: HostedApisOptions;
  readonly #log: Logger;
  readonly #controller: Controller;
  readonly #hostedClusters: Informer<HostedCluster>;
  /** By HostedCluster uid: the running server and the bundles it trusts. */
  readonly #running = new Map<string, { server: HostedApiServer; trusted: string; name: string }>();

  constructor(opts: HostedApisOptions) {
    this.#opts = opts;
    this.#log = (opts.log ?? silentLogger).child({ component: `hosted-apis-${opts.cluster.name}` });
    this.#hostedClusters = opts.cluster.informer<HostedCluster>(HostedClusterResource);
    this.#controller = new Controller({
      name: `hosted-apis-${opts.cluster.name}`,
      maxConcurrentReconciles: 1,
      log: this.#log,
      reconciler: { reconcile: (ctx, req) => this.#reconcile(ctx, req) },
    });
    enqueueForObject(this.#hostedClusters, this.#controller);
  }

  /** The API server serving a HostedCluster, by its name. */
  served(name: string): ServedApi | undefined {
    for (const r of this.#running.values()) if (r.name === name) return r.server;
    return undefined;
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.#hostedClusters.waitForSync(signal);
    try {
      await this.#controller.start(signal);
    } finally {
      await Promise.all([...this.#running.values()].map((r) => r.server.stop()));
      this.#running.clear();
    }
  }

  async #reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const hc = this.#hostedClusters.get(req.namespace, req.name);
    const uid = hc?.metadata.uid ?? "";
    if (!hc || hc.metadata.deletionTimestamp || !this.#opts.hostedClusters.includes(req.name)) {
      await this.#stopGone();
      return {};
    }
    const namespace = controlPlaneNamespaceName(req.namespace, req.name);
    // The simulator makes the control plane's namespace; until then there is nothing to serve.
    if (!(await this.#opts.cluster.client.find(NamespaceResource, namespace)))
      return { requeueAfterMs: SYNC_MS };
    let running = this.#running.get(uid);
    const bundles = await this.#bundles(namespace);
    if (!running) {
      running = {
        server: await this.#serve(hc, namespace, bundles),
        trusted: bundles.join(""),
        name: req.name,
      };
      this.#running.set(uid, running);
      ctx.log.info("Serving a hosted cluster's API for real", {
        hostedCluster: req.name,
        url: running.server.url,
      });
    } else if (running.trusted !== bundles.join("")) {
      await running.server.setClientCAs(bundles);
      running.trusted = bundles.join("");
      ctx.log.info("The hosted API trusts the signers' new bundles", { hostedCluster: req.name });
    }
    const endpoint = `${running.server.host}:${running.server.port}`;
    if (hc.metadata.annotations?.[SERVED_ENDPOINT_ANNOTATION] !== endpoint)
      await this.#opts.cluster.client.mergePatch(
        HostedClusterResource,
        { name: req.name, namespace: req.namespace },
        { metadata: { annotations: { [SERVED_ENDPOINT_ANNOTATION]: endpoint } } },
        { signal: ctx.signal },
      );
    return { requeueAfterMs: SYNC_MS };
  }

  /** The signers' trust bundles, each signer made first if the simulator has not yet (the first written stays). */
  async #bundles(namespace: string): Promise<string[]> {
    const client = this.#opts.cluster.client;
    const out: string[] = [];
    for (const [signerClass, secret] of Object.entries(SIGNER_SECRETS) as Array<
      [keyof typeof SIGNER_SECRETS, string]
    >) {
      let bundle = (await client.find<DataObject>(ConfigMapResource, bundleOf(secret), namespace))?.data?.[
        "ca-bundle.crt"
      ];
      if (!bundle) {
        await ensureSigner(client, namespace, signerClass);
        bundle = (await client.find<DataObject>(ConfigMapResource, bundleOf(secret), namespace))?.data?.[
          "ca-bundle.crt"
        ];
      }
      if (bundle) out.push(bundle);
    }
    return out;
  }

  async #serve(hc: HostedCluster, namespace: string, clientCAs: string[]): Promise<HostedApiServer> {
    const name = hc.metadata.name ?? "";
    const root = await ensureRootCA(this.#opts.cluster.client, namespace);
    const dir = join(this.#opts.workDir, `hosted-${name}-root-ca`);
    await mkdir(dir, { recursive: true });
    const servingCA = {
      name: "root-ca",
      certPath: join(dir, "root-ca.crt"),
      keyPath: join(dir, "root-ca.key"),
    };
    await writeFile(servingCA.certPath, root.certificate);
    await writeFile(servingCA.keyPath, root.key, { mode: 0o600 });
    return startHostedApiServer({
      name,
      assetsDir: this.#opts.assetsDir,
      etcdUrl: this.#opts.etcdUrl,
      workDir: this.#opts.workDir,
      servingCA,
      clientCAs,
      // Clients that dial the published endpoint by the cluster's API host name verify it too.
      dnsNames: [apiServerHost(hc)],
      groupBindings: { [ACCESS_LEVEL_GROUPS.ReadOnly]: HOSTED_VIEW_ROLE },
    });
  }

  /** Stops the servers of HostedClusters that are gone or going. */
  async #stopGone(): Promise<void> {
    const live = new Set(
      this.#hostedClusters
        .list()
        .filter((hc) => !hc.metadata.deletionTimestamp)
        .map((hc) => hc.metadata.uid ?? ""),
    );
    for (const [uid, r] of this.#running)
      if (!live.has(uid)) {
        this.#running.delete(uid);
        await r.server.stop();
        this.#log.info("Stopped a hosted cluster's API", { hostedCluster: r.name });
      }
  }
}
