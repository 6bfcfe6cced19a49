/**
 * What a controller running in the test's own process reports through its workqueue metrics,
 * read as evidence that the events it has seen have been reconciled.
 */
import type { MetricValueWithName } from "prom-client";
import { metricsRegistry } from "../../operators/runtime/metrics.ts";

/** The sum of a metric's series (or of one histogram sample, e.g. `…_count`) matching `labels`. */
async function metricSum(name: string, labels: Record<string, string>, sample = name): Promise<number> {
  const data = await metricsRegistry.getSingleMetric(name)?.get();
  const values: Array<MetricValueWithName<string>> = data?.values ?? [];
  return values
    .filter((v) => (v.metricName ?? name) === sample)
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

/** Items the queue has taken in so far (`workqueue_adds_total`; an add of a queued key does not count). */
export function queueAdds(queue: string): Promise<number> {
  return metricSum("workqueue_adds_total", { name: queue });
}

/**
 * Whether every item the queue has taken in has been worked off: nothing waits and no reconcile
 * runs. Each add is taken and finished exactly once, so the two counters are equal only then.
 * `finished` is read first: since it never exceeds `adds`, equality with a later `adds` means the
 * queue was idle when `finished` was read.
 */
export async function queueIdle(queue: string): Promise<boolean> {
  const finished = await metricSum(
    "workqueue_work_duration_seconds",
    { name: queue },
    "workqueue_work_duration_seconds_count",
  );
  return finished === (await queueAdds(queue));
}

/**
 * For `eventually`: true once an item added to the queue after `addsBefore` was read has been
 * reconciled and nothing is left queued or running, i.e. a reconcile that started after that
 * point has finished.
 */
export function reconciledSince(queue: string, addsBefore: number): () => Promise<boolean> {
  return async () => (await queueAdds(queue)) > addsBefore && (await queueIdle(queue));
}

/** A gauge's value summed over the series matching `labels` (0 when there is none), read as a scrape would. */
export function gaugeValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricSum(name, labels);
}

/** A counter's value summed over the series matching `labels` (0 when there is none). */
export function counterValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricSum(name, labels);
}
