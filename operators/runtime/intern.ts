/**
 * One copy of each repeated string in what the informers cache. JSON.parse gives every string
 * value its own copy, and most strings of a region's cache repeat (condition reasons and messages,
 * apiVersions, field managers, timestamps of the same second, a customer's subscription and
 * identity IDs): docs/decisions/0008-controllers-sized-for-ten-thousand-clusters.md.
 *
 * The pool is bounded: two generations of at most `generationSize` strings each. A string found in
 * the older generation moves to the newer; when the newer fills, the older is dropped. Strings
 * that recur (reasons, IDs shared by many objects) stay; one-off values (uids, resourceVersions)
 * pass through and age out. Dropping a generation never changes a cached object, only which copy
 * a later object gets.
 */
export class StringPool {
  readonly #generationSize: number;
  readonly #maxLength: number;
  #young = new Map<string, string>();
  #old = new Map<string, string>();

  /**
   * @param generationSize strings per generation (the pool holds at most twice this)
   * @param maxLength longer strings are not pooled: they are rarely shared, and hashing them costs
   */
  constructor(generationSize = 50_000, maxLength = 512) {
    this.#generationSize = generationSize;
    this.#maxLength = maxLength;
  }

  /** Strings held, both generations. */
  get size(): number {
    return this.#young.size + this.#old.size;
  }

  /** Whether the pool holds this string now. */
  has(value: string): boolean {
    return this.#young.has(value) || this.#old.has(value);
  }

  intern(value: string): string {
    if (value.length > this.#maxLength) return value;
    const young = this.#young.get(value);
    if (young !== undefined) return young;
    const canonical = this.#old.get(value) ?? value;
    this.#old.delete(value);
    if (this.#young.size >= this.#generationSize) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(canonical, canonical);
    return canonical;
  }

  /**
   * Replaces, in place, every string value in a freshly parsed JSON value with its pooled copy
   * (keys are already shared by V8), leaving frozen parts as they are. Returns the same value.
   */
  internAll<V>(value: V): V {
    // A frozen value is already shared by every object that holds it (summariseManagedFields).
    if (Object.isFrozen(value)) return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.#one(value[i]);
    } else if (typeof value === "object" && value !== null) {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = this.#one(record[key]);
    }
    return value;
  }

  #one(value: unknown): unknown {
    if (typeof value === "string") return this.intern(value);
    if (typeof value === "object" && value !== null) return this.internAll(value);
    return value;
  }
}

/** The process's pool, shared by every informer so that kinds share their common strings too. */
export const cachedStrings = new StringPool();
