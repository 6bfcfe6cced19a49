/**
 * Running a list of tasks a bounded number at a time, for the restore's ranks. On the first failure
 * no further task starts, but every one already started is let finish (each is idempotent, and a
 * caller that throws must leave no request in flight behind it): the result names each failure.
 */

export interface Failure<T> {
  item: T;
  error: unknown;
}

export interface SideBySideResult<T> {
  /** In the order they failed. */
  failures: Failure<T>[];
  /** How many tasks were started (succeeded, failed or stopped by the signal). */
  started: number;
}

/**
 * Runs `task` for each item, at most `limit` at once, started in the items' order. Stops starting
 * tasks after a failure or once `signal` is aborted; resolves (never rejects) when every started
 * task has settled.
 */
export async function sideBySide<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<SideBySideResult<T>> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, not ${limit}`);
  const failures: Failure<T>[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && failures.length === 0 && !signal?.aborted) {
      const item = items[next++] as T;
      try {
        await task(item);
      } catch (error) {
        failures.push({ item, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return { failures, started: next };
}
