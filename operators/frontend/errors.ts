/**
 * ARM's CloudError: `{"error": {code, message, target?, details?}}` with the code repeated in the
 * `X-Ms-Error-Code` header. Every failure the frontend returns is one of these; handlers throw a
 * CloudError and the router writes it. Codes and messages follow ARO HCP's frontend.
 */
import { OPERATION_ERROR_CODES, type CloudErrorBody } from "../api/v1alpha1/index.ts";

export const CODES = {
  ...OPERATION_ERROR_CODES,
  ServiceUnavailable: "ServiceUnavailable",
  InvalidParameter: "InvalidParameter",
  InvalidRequestContent: "InvalidRequestContent",
  InvalidResource: "InvalidResource",
  InvalidResourceType: "InvalidResourceType",
  MultipleErrorsOccurred: "MultipleErrorsOccurred",
  UnsupportedMediaType: "UnsupportedMediaType",
  Conflict: "Conflict",
  NotFound: "NotFound",
  InvalidSubscriptionState: "InvalidSubscriptionState",
  SubscriptionNotFound: "SubscriptionNotFound",
  InvalidSubscriptionID: "InvalidSubscriptionID",
  InvalidResourceName: "InvalidResourceName",
  InvalidResourceGroupName: "InvalidResourceGroupName",
  Unauthorized: "Unauthorized",
  MethodNotAllowed: "MethodNotAllowed",
  OperationNotSupported: "OperationNotSupported",
  BadRequest: "BadRequest",
  RequestTimeout: "RequestTimeout",
  RequestHeaderFieldsTooLarge: "RequestHeaderFieldsTooLarge",
} as const;

export type { CloudErrorBody };

/**
 * The longest message and target an answer carries. Messages quote what they refuse, cut short
 * where they are written (`shorten`); this bound holds for every message, so that no refusal
 * echoes a request back at its own size.
 */
export const MAX_ERROR_MESSAGE = 1024;
export const MAX_ERROR_TARGET = 256;

const bounded = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

function boundedBody(body: CloudErrorBody): CloudErrorBody {
  return {
    ...body,
    message: bounded(body.message, MAX_ERROR_MESSAGE),
    ...(body.target !== undefined ? { target: bounded(body.target, MAX_ERROR_TARGET) } : {}),
    ...(body.details ? { details: body.details.map(boundedBody) } : {}),
  };
}

/** A failure with its HTTP status, thrown by handlers and written by the router. */
export class CloudError extends Error {
  readonly status: number;
  readonly body: CloudErrorBody;
  readonly headers: Record<string, string>;

  constructor(status: number, body: CloudErrorBody, headers: Record<string, string> = {}) {
    const safe = boundedBody(body);
    super(safe.message);
    this.name = "CloudError";
    this.status = status;
    this.body = safe;
    this.headers = headers;
  }
}

/** One problem with one field of the request body; the target is the field's JSON path ("": none). */
export interface FieldError {
  target: string;
  message: string;
}

/**
 * The most field errors one refusal lists: a body of a thousand bad items would otherwise be
 * answered with a thousand details, hundreds of kilobytes for a few of request.
 */
export const MAX_ERROR_DETAILS = 100;

/** Field errors as ARM reports them: one InvalidRequestContent, or MultipleErrorsOccurred with details. */
export function fieldErrors(errors: FieldError[]): CloudError {
  const details = errors.slice(0, MAX_ERROR_DETAILS).map((e) => ({
    code: CODES.InvalidRequestContent,
    message: e.message,
    ...(e.target ? { target: e.target } : {}),
  }));
  const [only] = details;
  if (errors.length === 1 && only) return new CloudError(400, only);
  const listed = errors.length > details.length ? `; the first ${details.length} are listed` : "";
  return new CloudError(400, {
    code: CODES.MultipleErrorsOccurred,
    message: `${errors.length} errors occurred${listed}`,
    details,
  });
}

export const internalError = (): CloudError =>
  new CloudError(500, { code: CODES.InternalServerError, message: "Internal server error." });

export const conflict = (message: string): CloudError =>
  new CloudError(409, { code: CODES.Conflict, message });

export const serviceUnavailable = (message: string): CloudError =>
  new CloudError(503, { code: CODES.ServiceUnavailable, message }, { "retry-after": "59" });

export function resourceNotFound(type: string, name: string, resourceGroup: string): CloudError {
  return new CloudError(404, {
    code: CODES.ResourceNotFound,
    message: `The resource '${type}/${name}' under resource group '${resourceGroup}' was not found.`,
  });
}

export function invalidContent(detail: string, target?: string): CloudError {
  return new CloudError(400, {
    code: CODES.InvalidRequestContent,
    message: `The request content was invalid and could not be deserialized: ${JSON.stringify(detail)}`,
    ...(target ? { target } : {}),
  });
}
