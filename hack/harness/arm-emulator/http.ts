/**
 * The wire layer of the emulator: JSON values, the parsed request every handler receives, the reply
 * it returns, and ARM's error shapes (CloudError for ARM, the OAuth2 error for Entra ID).
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function asArray(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : [];
}

/** A request as handlers see it: the body already parsed, the path already split. */
export interface ArmRequest {
  method: string;
  /** Path without query, as sent (ARM paths are case-insensitive; compare lowercased). */
  path: string;
  segments: string[];
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The JSON body; undefined when the body is empty or not JSON. */
  body: unknown;
}

export interface ArmReply {
  status: number;
  headers?: Record<string, string>;
  body?: Json;
  /** Form-encoded or other non-JSON text; wins over `body`. */
  text?: string;
}

export function ok(body: Json, status = 200, headers?: Record<string, string>): ArmReply {
  return headers ? { status, body, headers } : { status, body };
}

export function noContent(status = 204): ArmReply {
  return { status };
}

/** ARM's error envelope: {"error": {"code", "message"}}. */
export function cloudError(status: number, code: string, message: string): ArmReply {
  return { status, body: { error: { code, message } } };
}

export function header(req: ArmRequest, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

export async function readRequest(req: IncomingMessage, url: URL): Promise<ArmRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const rawBody = Buffer.concat(chunks).toString("utf8");
  let body: unknown;
  if (rawBody.length > 0 && !(req.headers["content-type"] ?? "").includes("x-www-form-urlencoded")) {
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
  }
  return {
    method: (req.method ?? "GET").toUpperCase(),
    path: url.pathname,
    segments: url.pathname
      .split("/")
      .filter((s) => s.length > 0)
      .map(decodeURIComponent),
    query: url.searchParams,
    headers: req.headers,
    rawBody,
    body,
  };
}

/** Writes the reply with the headers every ARM response carries. */
export function writeReply(res: ServerResponse, reply: ArmReply, requestId: string): void {
  if (res.destroyed || res.writableEnded) return;
  const headers: Record<string, string> = {
    "x-ms-request-id": requestId,
    "x-ms-correlation-request-id": requestId,
    ...reply.headers,
  };
  let payload = "";
  if (reply.text !== undefined) {
    payload = reply.text;
  } else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    headers["content-type"] = "application/json; charset=utf-8";
  }
  headers["content-length"] = String(Buffer.byteLength(payload));
  res.writeHead(reply.status, headers);
  res.end(payload);
}

export function newRequestId(): string {
  return randomUUID();
}
