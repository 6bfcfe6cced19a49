/**
 * Preloaded into a process (`node --import ./hack/chaos/clock-skew.ts`) to move its wall clock by
 * HCP_CLOCK_OFFSET_MS: `Date.now()` and `new Date()` run that far ahead (or behind). Timers and
 * `performance.now()` keep real time, as they would on a machine whose clock is wrong. Chaos runs
 * start an agent this way to play a management cluster whose clock is an hour ahead.
 */
const offsetMs = Number(process.env["HCP_CLOCK_OFFSET_MS"] ?? 0);

if (Number.isFinite(offsetMs) && offsetMs !== 0) {
  const RealDate = Date;
  const skewedNow = (): number => RealDate.now() + offsetMs;
  // A function rather than a subclass: `Date(...)` without `new` and every constructor arity must work.
  const SkewedDate = function (...args: unknown[]): Date | string {
    if (new.target === undefined) return new RealDate(skewedNow()).toString();
    return args.length === 0 ? new RealDate(skewedNow()) : (Reflect.construct(RealDate, args) as Date);
  } as unknown as DateConstructor;
  Object.setPrototypeOf(SkewedDate, RealDate); // Date.parse, Date.UTC
  Object.defineProperty(SkewedDate, "prototype", { value: RealDate.prototype });
  Object.defineProperty(SkewedDate, "now", { value: skewedNow });
  globalThis.Date = SkewedDate;
}

export {};
