/**
 * The request headers whose values the service keeps: the request IDs and the caller's identity
 * travel onto CRs, operation documents, ManifestWorks and log lines, and ARM's system data onto
 * the resource. Each is checked here, at the edge, so that a value that cannot travel is a 400
 * naming the header, never a write that the apiserver refuses later, again and again.
 */
import type { IncomingHttpHeaders } from "node:http";
import { isCarriableRequestId, MAX_REQUEST_ID_LENGTH } from "../../hcp/requests.ts";
import { boundedDepth, isObject, MAX_JSON_DEPTH, type JsonObject } from "../api/json.ts";
import { header } from "../arm-request.ts";
import { CloudError, CODES } from "../errors.ts";

/** Identifiers: ARM sends GUIDs; anything printable is carried, nothing else. */
const ID_HEADERS = [
  "x-ms-correlation-request-id",
  "x-ms-client-request-id",
  "x-ms-home-tenant-id",
  "x-ms-client-object-id",
] as const;

/** Names a person may have: UTF-8 (HTTP carries it as Latin-1 bytes), no control characters. */
const NAME_HEADERS = ["x-ms-client-principal-name"] as const;
const MAX_NAME_LENGTH = 256;

export const SYSTEM_DATA_HEADER = "x-ms-arm-resource-system-data";

/** The request's headers with the carried ones checked and names decoded; or the refusal. */
export interface CheckedHeaders {
  headers: IncomingHttpHeaders;
  /** The first carried header that cannot travel; it is left out of `headers`. */
  refusal?: CloudError;
}

function badHeader(name: string, rule: string): CloudError {
  return new CloudError(400, {
    code: CODES.InvalidParameter,
    message: `The value of the header '${name}' is not valid: it must be ${rule}.`,
    target: name,
  });
}

/** A Latin-1 header value read as the UTF-8 it was sent as; undefined when it is not UTF-8. */
function utf8Of(value: string): string | undefined {
  const bytes = Buffer.from(value, "latin1");
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : undefined;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function checkCarriedHeaders(incoming: IncomingHttpHeaders): CheckedHeaders {
  const headers: IncomingHttpHeaders = { ...incoming };
  let refusal: CloudError | undefined;
  const refuse = (name: string, rule: string): void => {
    delete headers[name];
    refusal ??= badHeader(name, rule);
  };
  for (const name of ID_HEADERS) {
    const value = header({ headers: incoming }, name);
    if (value !== undefined && value !== "" && !isCarriableRequestId(value))
      refuse(name, `printable ASCII of at most ${MAX_REQUEST_ID_LENGTH} characters, such as a GUID`);
  }
  for (const name of NAME_HEADERS) {
    const value = header({ headers: incoming }, name);
    if (value === undefined || value === "") continue;
    const text = utf8Of(value);
    if (text === undefined || CONTROL.test(text) || text.length > MAX_NAME_LENGTH)
      refuse(name, `UTF-8 text of at most ${MAX_NAME_LENGTH} characters without control characters`);
    else headers[name] = text;
  }
  return refusal ? { headers, refusal } : { headers };
}

/**
 * ARM's system data, parsed; createdAt defaults to now. A header that is not a JSON object, or
 * nests deeper than any system data does, is refused rather than dropped.
 */
export function readSystemData(headers: IncomingHttpHeaders): JsonObject | undefined {
  const raw = header({ headers }, SYSTEM_DATA_HEADER);
  if (raw === undefined || raw === "") return undefined;
  const text = utf8Of(raw);
  let value: unknown;
  try {
    value = text === undefined ? undefined : JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isObject(value) || !boundedDepth(value, MAX_JSON_DEPTH))
    throw badHeader(SYSTEM_DATA_HEADER, `a JSON object in UTF-8, nested at most ${MAX_JSON_DEPTH} levels`);
  return { ...value, createdAt: value["createdAt"] ?? new Date().toISOString() };
}
