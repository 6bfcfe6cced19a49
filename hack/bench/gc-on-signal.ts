/**
 * Preloaded into a benchmarked process (`node --expose-gc --import <this>`): SIGUSR2 runs a full
 * garbage collection, so that the heap the bench reads next is what is live, not whatever garbage
 * the last collection left. Development tool only; the product never installs it.
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) process.on("SIGUSR2", () => gc());
