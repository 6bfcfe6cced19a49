/**
 * The body of a PUT or PATCH of a cluster or node pool, read against the schema of the request's
 * api-version: types, enums, patterns and ranges checked, defaults applied on create, create-only
 * fields kept on update, required fields checked. Pure: the stored resource comes in as `old`.
 * Every problem is a field error naming the body's field; all of them are reported at once.
 */
import type { ArmRequest } from "../arm-request.ts";
import { CloudError, CODES, fieldErrors, invalidContent, type FieldError } from "../errors.ts";
import { resourceName, type ResourceId } from "../resource-id.ts";
import type { VersionedBody } from "./conversion.ts";
import { isObject, shorten, text, type JsonObject } from "./json.ts";
import { schemaFor } from "./registry.ts";
import { applyDefaults, checkRequired, keepCreateOnly, mergePatch, readValue } from "./schema-walks.ts";

/** What of a request the body readers use. */
export type BodyRequest = Pick<ArmRequest, "body" | "apiVersion">;

export function checkBodyName(body: JsonObject, name: string): void {
  const given = body["name"];
  if (given !== undefined && (typeof given !== "string" || given.toLowerCase() !== name.toLowerCase()))
    throw new CloudError(400, {
      code: CODES.InvalidRequestContent,
      message: `The resource name '${shorten(text(given))}' in the request body does not match the name '${name}' in the request URL.`,
      target: "name",
    });
}

/** The versioned body of a PUT, defaulted (create) or completed from the stored resource (update). */
export function readPutBody(req: BodyRequest, id: ResourceId, old: VersionedBody | undefined): VersionedBody {
  const body = req.body;
  if (!isObject(body)) throw invalidContent("the body must be a JSON object");
  checkBodyName(body, resourceName(id));
  const schema = schemaFor(req.apiVersion, id.kind);
  const errors: FieldError[] = [];
  const read = readValue(schema, body, "", errors);
  const doc = (old ? keepCreateOnly(schema, old, read, errors) : applyDefaults(schema, read)) ?? {};
  checkRequired(schema, doc, "", errors);
  if (errors.length > 0) throw fieldErrors(errors);
  return doc;
}

/** The versioned body of a PATCH: the request merged onto the stored resource. */
export function readPatchBody(req: BodyRequest, id: ResourceId, old: VersionedBody): VersionedBody {
  const body = req.body ?? {};
  if (!isObject(body)) throw invalidContent("the body must be a JSON object");
  if (body["name"] !== undefined) checkBodyName(body, resourceName(id));
  const schema = schemaFor(req.apiVersion, id.kind);
  const errors: FieldError[] = [];
  readValue(schema, body, "", errors);
  const merged = readValue(schema, mergePatch(old, body), "", []);
  const doc = keepCreateOnly(schema, old, merged, errors) ?? {};
  checkRequired(schema, doc, "", errors);
  if (errors.length > 0) throw fieldErrors(errors);
  return doc;
}
