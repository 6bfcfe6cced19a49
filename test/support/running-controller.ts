/**
 * Running a runtime Controller in a unit test: a fresh metric name per controller, a handle to
 * stop it, and the small waits the controller tests share.
 */
import { vi } from "vitest";
import {
  Controller,
  type ControllerOptions,
  type Reconciler,
  type Request,
} from "../../operators/runtime/controller.ts";
import { silentLogger } from "../../operators/runtime/logger.ts";
import { metricsRegistry } from "../../operators/runtime/metrics.ts";

let controllerCount = 0;
/** Metrics live in the process registry, so every test gets its own controller name. */
export function uniqueName(): string {
  return `test-controller-${++controllerCount}`;
}

export const req: Request = { cluster: "svc", namespace: "ns", name: "obj" };

export interface Running {
  controller: Controller;
  stop: () => Promise<void>;
}

export function run(reconciler: Reconciler, options: Partial<ControllerOptions> = {}): Running {
  const controller = new Controller({ name: uniqueName(), reconciler, log: silentLogger, ...options });
  const abort = new AbortController();
  const started = controller.start(abort.signal);
  return {
    controller,
    stop: async () => {
      abort.abort();
      await started;
    },
  };
}

/** Lets timers due now and all pending promise callbacks run. */
export async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

export async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const data = await metricsRegistry.getSingleMetric(name)?.get();
  return data?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves on the signal's abort event; rejects when it has not come within `timeoutMs`. */
export function aborted(signal: AbortSignal, timeoutMs = 5_000): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${timeoutMs} ms`)), timeoutMs);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
