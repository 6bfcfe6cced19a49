/**
 * The document of an ARM asynchronous operation, as the frontend stores it (on the CR it acts on,
 * or in an `op-<id>` ConfigMap) and as hcpctl reads it back. The frontend's operations/ folder
 * says where each kind of operation lives and how its status is worked out.
 */
import type { KubeObject } from "../meta/v1.ts";
import { ARM_ANNOTATIONS } from "./arm.ts";

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

/** How long operation documents are kept after they start (ARO HCP's TTL). */
export const OPERATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** The key under which an operation ConfigMap holds its document. */
export const OPERATION_DATA_KEY = "operation.json";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function parseOperation(text: unknown): OperationDoc | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const doc: unknown = JSON.parse(text);
    return isRecord(doc) && typeof doc["id"] === "string" ? (doc as unknown as OperationDoc) : undefined;
  } catch {
    return undefined;
  }
}

/** The document an operation ConfigMap holds, or undefined when it holds none that reads. */
export function operationOfConfigMap(cm: KubeObject): OperationDoc | undefined {
  const data = cm["data"];
  return isRecord(data) ? parseOperation(data[OPERATION_DATA_KEY]) : undefined;
}

/** A CR's current operation, when its document is on the CR. */
export function currentOperationOf(cr: KubeObject): OperationDoc | undefined {
  const a = cr.metadata.annotations ?? {};
  const doc = parseOperation(a[ARM_ANNOTATIONS.operationDoc]);
  return doc && doc.id === a[ARM_ANNOTATIONS.operation] ? doc : undefined;
}

/** A CR's earlier operations, newest first. */
export function operationHistoryOf(cr: KubeObject): OperationDoc[] {
  const text = cr.metadata.annotations?.[ARM_ANNOTATIONS.operationHistory];
  if (!text) return [];
  try {
    const list: unknown = JSON.parse(text);
    return Array.isArray(list)
      ? list.filter((d): d is OperationDoc => isRecord(d) && typeof d["id"] === "string")
      : [];
  } catch {
    return [];
  }
}
