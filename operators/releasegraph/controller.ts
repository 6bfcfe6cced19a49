/**
 * The release-graph controller: keeps the parameters of the ValidatingAdmissionPolicy
 * hcp-update-graph (config/bases/operators/admission.yaml) in step with the release catalog, in
 * the operators' namespace: the ConfigMap hcp-release-graph holds every refusal the update graph
 * makes (releases/graph-params.ts), so the API server refuses a version change the plan holds,
 * `kubectl apply --dry-run=server` included, in the plan's words. Worked out again when the
 * catalog changes and when a release's end of life passes (a timer: no object changes then);
 * written only when the refusals differ from what the ConfigMap holds, so an edit by hand is put
 * back.
 */
import { isDeepStrictEqual } from "node:util";
import { CATALOG_CONFIGMAP, catalogSource, configMapType, type CatalogSource } from "../releases/catalog.ts";
import { GRAPH_PARAMS_CONFIGMAP, graphParams } from "../releases/graph-params.ts";
import { nextEndOfLife } from "../releases/plan.ts";
import { Applier } from "../runtime/apply.ts";
import type { Cluster } from "../runtime/clusters.ts";
import {
  Controller,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from "../runtime/controller.ts";
import type { Informer, Lister } from "../runtime/informer.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { enqueueMapped } from "../runtime/source.ts";

export const RELEASE_GRAPH_CONTROLLER = "releasegraph-controller";

/** The longest wait for an end of life to pass: a timer of weeks would overflow. */
const END_OF_LIFE_RECHECK_MS = 24 * 3600 * 1000;

export interface ReleaseGraphDeps {
  catalog: Pick<CatalogSource, "current">;
  /** The ConfigMaps of the operators' namespace. */
  configMaps: Lister<KubeObject>;
  namespace: string;
  applier: Pick<Applier, "apply">;
  /** Default Date.now. */
  now?: () => number;
}

/** The parameters ConfigMap as it should be at `now`. */
export function graphParamsConfigMap(
  deps: Pick<ReleaseGraphDeps, "catalog" | "namespace">,
  now: number,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: GRAPH_PARAMS_CONFIGMAP,
      namespace: deps.namespace,
      annotations: {
        "hcp.aro.dev/description": `Written by ${RELEASE_GRAPH_CONTROLLER} from ${CATALOG_CONFIGMAP}: the parameters of the admission policy hcp-update-graph. Edit the catalog, not this.`,
      },
    },
    data: graphParams(deps.catalog.current(), now),
  };
}

export class ReleaseGraphReconciler implements Reconciler {
  readonly #d: ReleaseGraphDeps;

  constructor(deps: ReleaseGraphDeps) {
    this.#d = deps;
  }

  async reconcile(ctx: ReconcileContext, _req: Request): Promise<Result> {
    const { configMaps, namespace, applier } = this.#d;
    const now = (this.#d.now ?? Date.now)();
    const desired = graphParamsConfigMap(this.#d, now);
    const current = configMaps.get(namespace, GRAPH_PARAMS_CONFIGMAP);
    if (!current || !isDeepStrictEqual(current["data"] ?? {}, desired["data"])) {
      ctx.log.info("Writing the update graph's admission parameters", {
        refusals: Object.keys(desired["data"] as object).length,
      });
      await applier.apply(configMapType, desired, ctx);
    }
    const next = nextEndOfLife(this.#d.catalog.current(), now);
    return next === undefined ? {} : { requeueAfterMs: Math.min(next - now, END_OF_LIFE_RECHECK_MS) };
  }
}

export interface ReleaseGraphControllerOptions {
  /** The service cluster. */
  cluster: Cluster;
  /** The operators' namespace: where the catalog is read and the parameters written. */
  namespace: string;
  log?: Logger;
  now?: () => number;
}

export class ReleaseGraphController implements Runnable {
  readonly needLeaderElection = true;
  readonly #controller: Controller;
  readonly #configMaps: Informer<KubeObject>;
  /** The one key: the catalog. */
  readonly #key: Request;

  constructor(opts: ReleaseGraphControllerOptions) {
    const { cluster, namespace } = opts;
    const log = (opts.log ?? silentLogger).child({ component: RELEASE_GRAPH_CONTROLLER });
    const catalog = catalogSource(cluster, namespace);
    this.#configMaps = catalog.informer;
    this.#controller = new Controller({
      name: RELEASE_GRAPH_CONTROLLER,
      log,
      reconciler: new ReleaseGraphReconciler({
        catalog,
        configMaps: catalog.informer,
        namespace,
        applier: new Applier(cluster.client, RELEASE_GRAPH_CONTROLLER),
        ...(opts.now ? { now: opts.now } : {}),
      }),
    });
    // One key: the catalog. Its own output is watched too, so an edit or a deletion is put back.
    const key: Request = { cluster: cluster.name, namespace, name: CATALOG_CONFIGMAP };
    this.#key = key;
    enqueueMapped(catalog.informer, this.#controller, (cm) =>
      [CATALOG_CONFIGMAP, GRAPH_PARAMS_CONFIGMAP].includes(cm.metadata.name ?? "") ? [key] : [],
    );
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.#configMaps.waitForSync(signal);
    // The catalog may be missing; the parameters are still written (none refuse), once.
    this.#controller.enqueue(this.#key);
    await this.#controller.start(signal);
  }
}
