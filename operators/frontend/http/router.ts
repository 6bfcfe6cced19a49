/**
 * Routing: the route a path matches and the handler of the method; 404 for no route, 400 for a
 * path parameter whose percent-encoding is malformed, 405 for a method the route does not serve.
 */
import { CloudError, CODES } from "../errors.ts";
import { badEncoding, match, type Handler, type Route } from "./routes.ts";

export interface Routed {
  route: Route;
  params: Record<string, string>;
  handler: Handler;
}

export function routeRequest(routes: Route[], method: string, path: string): Routed {
  const found = match(routes, path);
  if (!found)
    throw new CloudError(404, {
      code: CODES.NotFound,
      message: `The requested path '${path.slice(0, 500)}' was not found.`,
    });
  const { route, params } = found;
  if (found.malformed !== undefined) throw badEncoding(found.malformed);
  const handler = route.methods[method];
  if (!handler)
    throw new CloudError(405, {
      code: CODES.MethodNotAllowed,
      message: `The method '${method}' is not allowed here.`,
    });
  return { route, params, handler };
}
