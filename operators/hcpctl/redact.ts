/**
 * Redaction for what `must-gather` writes: a bundle is handed around (tickets, chat), so no secret
 * value may be in it. Replaced, wherever they are (a ManifestWork's manifests, an annotation that
 * holds JSON, a status):
 *
 *  - every value of a Secret's `data` and `stringData` (the pull secret a cluster's work carries);
 *  - every string under a key that names a secret: …password, …secret, …token, …privateKey,
 *    …apiKey, …credential(s), …kubeconfig, .dockerconfigjson, .dockercfg, …key-data.
 *
 * A key that names a reference (`credentialsSecretName`, `pullSecret: {name}`, `secretRef`) is not
 * secret-like by this rule: only its strings' key decides, and `name` is not such a key. A
 * redacted value says how long it was, nothing of what it was. Pure.
 */

/** What replaces a secret value of `bytes` bytes. */
export const redacted = (bytes: number): string => `<redacted: ${bytes} bytes>`;

const SECRET_KEY_ENDINGS = [
  "password",
  "passwd",
  "secret",
  "token",
  "privatekey",
  "apikey",
  "credential",
  "credentials",
  "kubeconfig",
  "dockerconfigjson",
  "dockercfg",
  "keydata",
];

/** Whether a key names a secret value ("clientSecret", "bearer_token", "client-key-data"). */
export function isSecretKey(key: string): boolean {
  const normalised = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  return SECRET_KEY_ENDINGS.some((ending) => normalised.endsWith(ending));
}

type Json = unknown;

export interface Redacted<T> {
  value: T;
  /** JSONPath-like paths of every value replaced, e.g. `.spec.workload.manifests[1].data[".dockerconfigjson"]`. */
  paths: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const step = (path: string, key: string): string =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/** Bytes a Secret value stands for: `data` is base64, `stringData` plain text. */
function secretBytes(value: unknown, base64: boolean): number {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return base64 ? Buffer.from(text, "base64").length : Buffer.byteLength(text);
}

function redactSecretData(
  obj: Record<string, unknown>,
  path: string,
  paths: string[],
): Record<string, unknown> {
  const out = { ...obj };
  for (const field of ["data", "stringData"] as const) {
    const data = obj[field];
    if (!isRecord(data)) continue;
    const fieldPath = step(path, field);
    out[field] = Object.fromEntries(
      Object.entries(data).map(([k, v]) => {
        paths.push(step(fieldPath, k));
        return [k, redacted(secretBytes(v, field === "data"))];
      }),
    );
  }
  return out;
}

/** A string that holds a JSON object or list (an annotation, a raw feedback value), redacted inside. */
function redactJsonText(text: string, path: string, paths: string[]): string {
  if (!/^\s*[[{]/.test(text)) return text;
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    return text;
  }
  const before = paths.length;
  const value = walk(parsed, `${path}<json>`, paths);
  return paths.length > before ? JSON.stringify(value) : text;
}

function walkRecord(obj: Record<string, unknown>, path: string, paths: string[]): Record<string, unknown> {
  const base = obj["kind"] === "Secret" ? redactSecretData(obj, path, paths) : obj;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) {
    const at = step(path, key);
    const secretData = base !== obj && (key === "data" || key === "stringData");
    if (!secretData && typeof value === "string" && value !== "" && isSecretKey(key)) {
      paths.push(at);
      out[key] = redacted(Buffer.byteLength(value));
    } else out[key] = secretData ? value : walk(value, at, paths);
  }
  return out;
}

function walk(value: Json, path: string, paths: string[]): Json {
  if (typeof value === "string") return redactJsonText(value, path, paths);
  if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}[${i}]`, paths));
  if (isRecord(value)) return walkRecord(value, path, paths);
  return value;
}

/** The object with every secret value replaced, and where. The input is not changed. */
export function redact<T>(obj: T): Redacted<T> {
  const paths: string[] = [];
  const value = walk(obj, "", paths) as T;
  return { value, paths };
}
