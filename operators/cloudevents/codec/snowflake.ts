/**
 * Sequence IDs for status events: bwmarrin/snowflake IDs as the Go agent makes them (node 1), so
 * the real maestro-server, which refuses IDs from another node, orders ours like its own agent's.
 * Layout: (ms − epoch) << 22 | node << 12 | step.
 */
const EPOCH_MS = 1288834974657n;
const NODE_BITS = 10n;
const STEP_BITS = 12n;
const STEP_MASK = (1n << STEP_BITS) - 1n;
const NODE_MASK = (1n << NODE_BITS) - 1n;

export interface SnowflakeParts {
  timeMs: number;
  node: number;
  step: number;
}

export class SnowflakeGenerator {
  readonly #node: bigint;
  #lastMs = -1n;
  #step = 0n;
  readonly #now: () => number;

  /**
   * `now` defaults to the wall clock read once and then advanced by the monotonic clock, as Go's
   * snowflake does: a wall-clock jump after start moves no ID, so one jump cannot poison the
   * order of a work's statuses at the server.
   */
  constructor(node = 1, now: () => number = monotonicWallClock()) {
    if (!Number.isInteger(node) || node < 0 || BigInt(node) > NODE_MASK) throw new Error(`bad node ${node}`);
    this.#node = BigInt(node);
    this.#now = now;
  }

  /** A decimal ID that is larger than every earlier one from this generator. */
  next(): string {
    let ms = BigInt(this.#now());
    if (ms < this.#lastMs) ms = this.#lastMs; // the clock stepped back: keep IDs increasing
    if (ms === this.#lastMs) {
      this.#step = (this.#step + 1n) & STEP_MASK;
      if (this.#step === 0n) ms = this.#lastMs + 1n; // 4096 IDs in one millisecond: borrow the next one
    } else {
      this.#step = 0n;
    }
    this.#lastMs = ms;
    return (((ms - EPOCH_MS) << (NODE_BITS + STEP_BITS)) | (this.#node << STEP_BITS) | this.#step).toString();
  }
}

function monotonicWallClock(): () => number {
  const offset = Date.now() - performance.now();
  return () => Math.floor(offset + performance.now());
}

/** A sequence ID as bwmarrin/snowflake formats one: a decimal number. */
export function isSnowflake(id: string): boolean {
  return /^\d{1,20}$/.test(id);
}

export function parseSnowflake(id: string): SnowflakeParts {
  if (!isSnowflake(id)) throw new Error(`sequence id "${id}" is not a decimal snowflake`);
  const n = BigInt(id);
  return {
    timeMs: Number((n >> (NODE_BITS + STEP_BITS)) + EPOCH_MS),
    node: Number((n >> STEP_BITS) & NODE_MASK),
    step: Number(n & STEP_MASK),
  };
}

/**
 * Whether `candidate` is newer than `current`, compared as maestro-server does: time, then step.
 * IDs from different nodes cannot be ordered and throw.
 */
export function isNewerSequence(candidate: string, current: string | undefined): boolean {
  if (current === undefined) return true;
  const a = parseSnowflake(candidate);
  const b = parseSnowflake(current);
  if (a.node !== b.node) throw new Error(`sequence ids ${candidate} and ${current} are from different nodes`);
  return a.timeMs > b.timeMs || (a.timeMs === b.timeMs && a.step > b.step);
}
