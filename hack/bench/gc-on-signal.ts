/**
 * Preloaded into a benchmarked process (`node --expose-gc --import <this>`): SIGUSR2 runs a full
 * garbage collection and counts it in `bench_forced_gcs_total` on the process's own /metrics, so
 * that the bench reads the heap once that count moves: what is live, not whatever garbage the
 * last collection left. Development tool only; the product never installs it.
 */
import { counter, metricsRegistry } from "../../operators/runtime/metrics.ts";

const gc = (globalThis as { gc?: () => void }).gc;
const forced = counter(metricsRegistry, {
  name: "bench_forced_gcs_total",
  help: "Full garbage collections the bench asked for (SIGUSR2)",
});
if (gc)
  process.on("SIGUSR2", () => {
    gc();
    forced.inc();
  });
