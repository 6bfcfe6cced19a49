/**
 * The document of an ARM asynchronous operation, as the frontend stores it (on the CR it acts on,
 * or in an `op-<id>` ConfigMap) and as hcpctl reads it back. The frontend's operations/ folder
 * says where each kind of operation lives and how its status is worked out.
 */

/** The resource kinds ARM reaches through the frontend. */
export type ArmResourceKind = "cluster" | "nodePool" | "externalAuth";

/** What asked for the operation. */
export type OperationRequest = "Create" | "Update" | "Delete" | "RequestCredential" | "RevokeCredentials";

/** ARM's provisioning states; the last three are terminal. */
export type ProvisioningState =
  "Accepted" | "Provisioning" | "Updating" | "Deleting" | "Succeeded" | "Failed" | "Canceled";

/** ARM's error body (a CloudError's `error`). */
export interface CloudErrorBody {
  code: string;
  message: string;
  target?: string;
  details?: CloudErrorBody[];
}

export interface OperationDoc {
  id: string;
  request: OperationRequest;
  /** The ARM resource ID as the request named it. */
  resourceId: string;
  kind: ArmResourceKind;
  /** The CR (in the subscription's namespace). */
  target: string;
  /** Delete: the uid of the CR it deletes (a CR of that name made later is another resource). */
  targetUid?: string;
  location: string;
  apiVersion: string;
  tenantId?: string;
  clientObjectId?: string;
  clientRequestId?: string;
  correlationRequestId?: string;
  startTime: string;
  lastTransitionTime: string;
  status: ProvisioningState;
  endTime?: string;
  error?: CloudErrorBody;
  /** RequestCredential, RevokeCredentials: the BreakglassCredential or BreakglassRevocation created. */
  credential?: string;
  /** By when it must end, else it ends Failed; none on documents older than deadlines. */
  deadline?: string;
  /** Azure-AsyncNotificationUri: where the notifier POSTs the status once it is terminal. */
  notificationUri?: string;
}
