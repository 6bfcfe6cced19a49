/**
 * The errors hcpctl prints: one line that names what is wrong and where, never a stack trace.
 * A CliError carries the exit code (1, as kubectl uses for every failure); anything else that
 * reaches the top is explained by `explain` from what the API server or the network said.
 */
import { KubeApiError } from "../runtime/kube.ts";

export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, options?: ErrorOptions & { exitCode?: number }) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = options?.exitCode ?? 1;
  }
}

/** Where a request went, for messages about the server. */
export interface Target {
  server: string;
  context: string;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * What the network said, when the request never got an answer: the clients reject with an error of
 * their own (fetch's "fetch failed", KubeClient's naming the request) and the socket's or TLS
 * layer's error as the cause.
 */
function networkFailure(err: unknown): string | undefined {
  const chain: Error[] = [];
  for (let e: unknown = err; e instanceof Error && chain.length < 5; e = e.cause) chain.push(e);
  const coded = chain.find((e) => NETWORK_CODES.has(String((e as { code?: unknown }).code)));
  if (coded) return coded.message;
  if (chain[0]?.message === "fetch failed") return chain.at(-1)?.message ?? "fetch failed";
  return undefined;
}

function apiMessage(err: KubeApiError, target: Target): string {
  const where = `the API server at ${target.server} (context "${target.context}")`;
  if (err.code === 401) return `${where} did not accept the credentials: ${err.message}`;
  if (err.code === 403) return `${where} refused the request: ${err.message}`;
  return `${where} answered ${err.code}${err.reason ? ` ${err.reason}` : ""}: ${err.message}`;
}

/** A CliError for whatever went wrong talking to the API server. */
export function explain(err: unknown, target: Target): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof KubeApiError) return new CliError(apiMessage(err, target), { cause: err });
  const net = networkFailure(err);
  if (net)
    return new CliError(
      `cannot reach the API server at ${target.server} (context "${target.context}"): ${net}`,
      {
        cause: err,
      },
    );
  const message = err instanceof Error ? err.message : String(err);
  return new CliError(message, { cause: err });
}
