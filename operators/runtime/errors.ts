/** A reconcile error that retrying cannot fix: it is logged and recorded, never requeued with backoff. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/** Thrown by the cluster registry when a cluster is not (or no longer) registered. */
export class ClusterNotConnectedError extends Error {
  readonly cluster: string;
  constructor(cluster: string) {
    super(`cluster ${cluster} is not connected`);
    this.name = "ClusterNotConnectedError";
    this.cluster = cluster;
  }
}

/** An HTTP status carried by errors from the Kubernetes API, whichever client layer raised them. */
export function apiStatusCode(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown };
  if (typeof e.code === "number") return e.code;
  if (typeof e.statusCode === "number") return e.statusCode;
  return undefined;
}

export function isNotFound(err: unknown): boolean {
  return apiStatusCode(err) === 404;
}

export function isConflict(err: unknown): boolean {
  return apiStatusCode(err) === 409;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
