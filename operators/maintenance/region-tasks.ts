/**
 * The task registry a region's operators run, built from what this process holds: the cluster
 * controller's signing-key rotation (handed in by the caller, as a controller may not import
 * another), and the service cluster's caches and client for the rest. operators/main.ts and the
 * local region (hack/harness/stack.ts) both build it here, so they run the same tasks.
 */
import { NodePoolResource, type NodePool } from "../api/v1alpha1/index.ts";
import { catalogSource } from "../releases/catalog.ts";
import type { Cluster } from "../runtime/clusters.ts";
import { workTemplateRefresh } from "./refresh-task.ts";
import type { TaskRegistry } from "./step.ts";
import { taskRegistry, type SigningKeyRotation } from "./tasks.ts";
import { controlPlaneUpgrades } from "./upgrade-task.ts";

export interface RegionTaskOptions {
  service: Cluster;
  /** The operators' namespace (the release catalog). */
  namespace: string;
  signingKeys: SigningKeyRotation;
  /** The work template revision RefreshWorkTemplate asks for; default the one this build renders. */
  workTemplateRevision?: () => number;
}

export function regionTaskRegistry(opts: RegionTaskOptions): TaskRegistry {
  const { service, namespace } = opts;
  // The catalog and node pools come from the caches the cluster controller starts (informers are
  // shared by key).
  const catalog = catalogSource(service, namespace);
  return taskRegistry({
    signingKeys: opts.signingKeys,
    controlPlane: controlPlaneUpgrades({
      client: service.client,
      catalog: () => catalog.current(),
      nodePools: service.informer<NodePool>(NodePoolResource),
    }),
    workTemplates: workTemplateRefresh({ client: service.client, revision: opts.workTemplateRevision }),
  });
}
