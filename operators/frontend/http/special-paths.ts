/** Paths outside ARM's: /healthz and /metrics, answered before routing (after authentication). */
import type { Registry } from "prom-client";
import type { Reply } from "../arm-request.ts";

export const SPECIAL_PATHS = ["/healthz", "/metrics"];

export async function specialPath(
  registry: Pick<Registry, "metrics" | "contentType">,
  method: string,
  path: string,
): Promise<Reply | undefined> {
  if (method !== "GET") return undefined;
  if (path === "/healthz") return { status: 200, body: "ok" };
  if (path === "/metrics")
    return { status: 200, body: await registry.metrics(), headers: { "content-type": registry.contentType } };
  return undefined;
}
