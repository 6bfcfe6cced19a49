/**
 * Plain JSON helpers every walk over a request body uses: the object test, own-field writes that
 * a key "__proto__" cannot turn into a prototype, scalar text, shortened values for messages, and
 * the nesting bound a body is checked against before any recursive walk.
 */

export type JsonObject = Record<string, unknown>;

/** A JSON scalar as text; "" for anything else. */
export function text(v: unknown): string {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : "";
}

/** Sets an own field: a key "__proto__" from a request is a field, never the object's prototype. */
export function setOwn(o: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The deepest nesting a request's JSON may have. ARM's bodies nest under ten levels; every walk
 * over a body (schema, merge patch, copies) recurses once a level, so a body nested thousands
 * deep would exhaust the stack instead of being refused.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests at most `max` arrays and objects deep; iterative, so any depth is safe. */
export function boundedDepth(value: unknown, max: number): boolean {
  const pending: Array<[object, number]> = [];
  const visit = (v: unknown, depth: number): boolean => {
    if (typeof v !== "object" || v === null) return true;
    if (depth > max) return false;
    pending.push([v, depth]);
    return true;
  };
  if (!visit(value, 1)) return false;
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [v, depth] = next;
    for (const child of Object.values(v)) if (!visit(child, depth + 1)) return false;
  }
  return true;
}

/** A value as an error message shows it: long ones are cut, so that a refusal stays small. */
export function shorten(v: string, max = 64): string {
  return v.length > max ? `${v.slice(0, max)}…` : v;
}
