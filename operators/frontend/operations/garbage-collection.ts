/**
 * Operation documents kept in ConfigMaps go seven days after they started (ARO HCP's TTL).
 * Every frontend replica collects, hourly; a ConfigMap another replica removed first is no error.
 */
import type { KubeClient, KubeObject } from "../../runtime/kube.ts";
import { isApiError } from "../../runtime/kube.ts";
import type { Logger } from "../../runtime/logger.ts";
import { configMapType } from "../service-cluster.ts";
import { ARM_LABELS } from "../../api/v1alpha1/index.ts";
import { OPERATION_TTL_MS, operationOfConfigMap } from "../../api/v1alpha1/index.ts";

export const COLLECT_INTERVAL_MS = 3600_000;

/** Deletes operation documents past the TTL in every namespace; returns how many. */
export async function collectExpired(client: KubeClient, now = Date.now()): Promise<number> {
  const list = await client.listAll<KubeObject>(configMapType, {
    labelSelector: `${ARM_LABELS.operation}=true`,
  });
  let removed = 0;
  for (const cm of list.items) {
    const doc = operationOfConfigMap(cm);
    if (!doc || now - Date.parse(doc.startTime) < OPERATION_TTL_MS) continue;
    try {
      await client.delete(configMapType, {
        name: cm.metadata.name ?? "",
        namespace: cm.metadata.namespace,
      });
      removed++;
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
  }
  return removed;
}

/** Collects now and every COLLECT_INTERVAL_MS until the signal aborts. */
export async function collectUntil(client: KubeClient, log: Logger, signal: AbortSignal): Promise<void> {
  const collect = (): void =>
    void collectExpired(client).catch((err: unknown) => log.error("Operation cleanup failed", err));
  const timer = setInterval(collect, COLLECT_INTERVAL_MS);
  collect();
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  clearInterval(timer);
}
