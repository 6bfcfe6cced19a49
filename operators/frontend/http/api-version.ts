/**
 * The api-version: required on every route that serves one; a resource route takes the versions
 * the registry serves (api/registry.ts), the subscription route ARM's subscription lifecycle
 * version. Refusals name the route's resource type.
 */
import { isServedVersion, SUBSCRIPTION_API_VERSION, type ApiVersion } from "../api/registry.ts";
import { CloudError, CODES } from "../errors.ts";
import type { Route } from "./routes.ts";

/** The served resource version the request names, if any, once the route's rule is met. */
export function checkApiVersion(r: Route, version: string | null): ApiVersion | undefined {
  if (r.apiVersion !== "none") checkRouteVersion(r, version);
  return version !== null && isServedVersion(version) ? version : undefined;
}

function checkRouteVersion(r: Route, version: string | null): void {
  if (version === null || version === "")
    throw new CloudError(400, {
      code: CODES.InvalidParameter,
      message: "The request is missing required parameter 'api-version'.",
      target: "api-version",
    });
  const ok =
    r.apiVersion === "subscription" ? version === SUBSCRIPTION_API_VERSION : isServedVersion(version);
  if (!ok)
    throw new CloudError(400, {
      code: CODES.InvalidResourceType,
      message: `The resource type '${r.resourceType}' could not be found API version '${version.slice(0, 100)}'.`,
    });
}
