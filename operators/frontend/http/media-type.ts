/**
 * The media type and JSON of a request body: only application/json, and no deeper than
 * MAX_JSON_DEPTH, so that no walk after it can exhaust the stack.
 */
import { boundedDepth, MAX_JSON_DEPTH } from "../api/json.ts";
import { CloudError, CODES, invalidContent } from "../errors.ts";

const METHODS_WITH_BODY = ["PUT", "PATCH", "POST"];

/** The JSON body of a PUT, PATCH or POST; undefined for other methods and empty bodies. */
export function parseRequestBody(method: string, contentType: string | undefined, raw: Buffer): unknown {
  if (!METHODS_WITH_BODY.includes(method)) return undefined;
  const media = contentType?.split(";")[0]?.trim().toLowerCase();
  if ((raw.length > 0 || media) && media !== "application/json")
    throw new CloudError(415, {
      code: CODES.UnsupportedMediaType,
      message: `The content media type '${contentType ?? ""}' is not supported. Only 'application/json' is supported.`,
    });
  if (raw.length === 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw invalidContent(err instanceof Error ? err.message : String(err));
  }
  if (!boundedDepth(body, MAX_JSON_DEPTH))
    throw invalidContent(`the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  return body;
}
