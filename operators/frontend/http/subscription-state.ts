/**
 * Subscription state (B.3): every route but the subscription's own needs a registered
 * subscription; a Warned or Suspended one takes reads and deletes only. The subscription found
 * travels on the request (its tenant and registered features are read by handlers).
 */
import { CloudError, CODES } from "../errors.ts";
import type { Subscription, SubscriptionStore } from "../handlers/subscriptions.ts";
import type { Route } from "./routes.ts";

const READ_OR_DELETE = ["GET", "DELETE"];

/** Refuses a request the subscription's state does not allow (B.3 "Subscription state"). */
export function checkSubscriptionState(
  subscriptionId: string,
  sub: Subscription | undefined,
  method: string,
): Subscription {
  if (!sub || sub.state === "Unregistered")
    throw new CloudError(400, {
      code: CODES.InvalidSubscriptionState,
      message: `Request is not allowed in unregistered subscription '${subscriptionId}'.`,
    });
  if (sub.state === "Deleted")
    throw new CloudError(400, {
      code: CODES.InvalidSubscriptionState,
      message: `Request is not allowed in subscription in state '${sub.state}'.`,
    });
  if ((sub.state === "Warned" || sub.state === "Suspended") && !READ_OR_DELETE.includes(method))
    throw new CloudError(409, {
      code: CODES.InvalidSubscriptionState,
      message: `Request is not allowed in subscription in state '${sub.state}'.`,
    });
  return sub;
}

/** The request's subscription, on routes that check it; undefined on those that do not. */
export async function subscriptionFor(
  r: Route,
  subscriptionId: string,
  method: string,
  store: Pick<SubscriptionStore, "get">,
): Promise<Subscription | undefined> {
  if (!r.checkSubscription) return undefined;
  return checkSubscriptionState(subscriptionId, await store.get(subscriptionId), method);
}
