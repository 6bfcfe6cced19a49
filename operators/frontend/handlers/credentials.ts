/**
 * The admin-credential actions of an hcpOpenShiftCluster. `requestAdminCredential` creates a
 * BreakglassCredential (the breakglass controller has HyperShift sign it) and answers 202 with
 * the operation; the operation's result is `{kubeconfig, expirationTimestamp}`. In the versions
 * the registry marks (CSR_VERSIONS) the body may carry the client's own
 * `certificateSigningRequest` (PEM): the service then never sees a key and the kubeconfig carries
 * only the certificate. Other versions take no body and the service makes the key.
 * `revokeCredentials` creates a BreakglassRevocation and answers 202; its result is 204. Both are
 * refused (409) while the cluster is not settled.
 */
import {
  breakglassCredential,
  breakglassRevocation,
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  CUSTOMER_BREAK_GLASS,
  type BreakglassCredential,
  type BreakglassRevocation,
  type HcpCluster,
} from "../../api/v1alpha1/index.ts";
import { SecretResource } from "../../api/core.ts";
import { kubeconfig } from "../../hcp/kubeconfig.ts";
import { breakGlassRequestProblem } from "../../hcp/pkcs10.ts";
import type { KubeClient, KubeObject } from "../../runtime/kube.ts";
import { header, type ArmRequest, type Reply } from "../arm-request.ts";
import { isObject } from "../api/json.ts";
import { CSR_VERSIONS } from "../api/registry.ts";
import { CloudError, CODES, internalError } from "../errors.ts";
import type { ResourceId } from "../resource-id.ts";
import { settledCluster } from "./conflicts.ts";
import type { ResourceDeps } from "./deps.ts";
import { fromCR } from "./target.ts";
import { newOperation, operationHeaders } from "./writes.ts";

const badField = (target: string, message: string): CloudError =>
  new CloudError(400, { code: CODES.InvalidRequestContent, message, target });

/** The client's PEM request, when the body of this api-version carries one; checked as HyperShift would. */
export async function requestedCsr(
  req: Pick<ArmRequest, "body" | "apiVersion">,
): Promise<string | undefined> {
  const body = req.body ?? {};
  if (!isObject(body)) throw badField("", "The request body must be a JSON object.");
  const unknown = Object.keys(body).filter((k) => k !== "certificateSigningRequest");
  if (unknown.length > 0)
    throw badField(unknown[0] ?? "", `The property '${unknown[0] ?? ""}' is not part of this request.`);
  const csr = body["certificateSigningRequest"];
  if (csr === undefined) return undefined;
  if (!CSR_VERSIONS.includes(req.apiVersion))
    throw badField(
      "certificateSigningRequest",
      `'certificateSigningRequest' is not accepted in api-version '${req.apiVersion}'; use ${CSR_VERSIONS.join(", ")}.`,
    );
  if (typeof csr !== "string" || csr === "")
    throw badField(
      "certificateSigningRequest",
      "'certificateSigningRequest' must be a PEM certificate request.",
    );
  const problem = await breakGlassRequestProblem(csr, CUSTOMER_BREAK_GLASS);
  if (problem)
    throw badField("certificateSigningRequest", `Invalid 'certificateSigningRequest': ${problem}.`);
  return csr;
}

/** Who asked, as ARM names the caller. */
export function requesterOf(req: ArmRequest): string {
  return (
    header(req, "x-ms-client-principal-name") ??
    header(req, "x-ms-client-object-id") ??
    "unknown-arm-caller"
  ).slice(0, 256);
}

export function credentialCR(
  cluster: HcpCluster,
  name: string,
  requester: string,
  csr: string | undefined,
): BreakglassCredential {
  return breakglassCredential({
    cluster,
    name,
    requester,
    reason: "ARM requestAdminCredential",
    certificateSigningRequest: csr,
  });
}

export function revocationCR(cluster: HcpCluster, name: string, requester: string): BreakglassRevocation {
  return breakglassRevocation({ cluster, name, requester, reason: "ARM revokeCredentials" });
}

export const credentialTypes = {
  credential: BreakglassCredentialResource,
  revocation: BreakglassRevocationResource,
};

/** The kubeconfig (with the key the service made) the controller stored beside the key. */
async function storedKubeconfig(
  client: KubeClient,
  name: string,
  namespace: string | undefined,
): Promise<string> {
  const secret = await client.find<KubeObject & { data?: Record<string, string> }>(
    SecretResource,
    name,
    namespace,
  );
  const config = secret?.data?.["kubeconfig"];
  if (!config) throw internalError();
  return Buffer.from(config, "base64").toString("utf8");
}

/** The result of a Succeeded requestAdminCredential: the kubeconfig and when its certificate expires. */
export async function credentialResult(
  client: KubeClient,
  credential: BreakglassCredential,
): Promise<{ kubeconfig: string; expirationTimestamp: string }> {
  const { status } = credential;
  if (!status?.certificate || !status.expirationTimestamp) throw internalError();
  const namespace = credential.metadata.namespace;
  if (status.kubeconfigSecret)
    return {
      kubeconfig: await storedKubeconfig(client, status.kubeconfigSecret, namespace),
      expirationTimestamp: status.expirationTimestamp,
    };
  const cluster = await client.find<HcpCluster>(
    {
      group: "hcp.aro.dev",
      version: "v1alpha1",
      kind: "HcpCluster",
      plural: "hcpclusters",
      namespaced: true,
    },
    credential.spec.clusterRef.name,
    namespace,
  );
  return {
    kubeconfig: kubeconfig({
      cluster: cluster?.metadata.name ?? credential.spec.clusterRef.name,
      server: cluster?.status?.apiURL ?? "",
      user: `break-glass-${credential.spec.requester}`,
      certificate: status.certificate,
      certificateAuthority: status.serverCA,
    }),
    expirationTimestamp: status.expirationTimestamp,
  };
}

/** POST requestAdminCredential: a BreakglassCredential and its operation. */
export async function requestAdminCredential(
  deps: ResourceDeps,
  req: ArmRequest,
  id: ResourceId,
): Promise<Reply> {
  const { cluster, t } = await settledCluster(deps, id);
  const csr = await requestedCsr(req);
  const op = newOperation(deps, req, t, {
    request: "RequestCredential",
    location: fromCR("cluster", cluster).location,
  });
  const name = `arm-${op.id.toLowerCase()}`;
  await deps.operations.create(t.namespace, { ...op, credential: name });
  const requester = requesterOf(req);
  await deps.client.create(credentialTypes.credential, credentialCR(cluster, name, requester, csr));
  req.log.info("Audit: break-glass credential requested", {
    audit: "breakglass",
    action: "request",
    operation: op.id,
    cluster: t.name,
    requester,
    credential: name,
    clientCsr: csr !== undefined,
  });
  return { status: 202, headers: { ...operationHeaders(req, op, true), "retry-after": "1" } };
}

/** POST revokeCredentials: a BreakglassRevocation and its operation. */
export async function revokeCredentials(deps: ResourceDeps, req: ArmRequest, id: ResourceId): Promise<Reply> {
  const { cluster, t } = await settledCluster(deps, id);
  const op = newOperation(deps, req, t, {
    request: "RevokeCredentials",
    location: fromCR("cluster", cluster).location,
  });
  const name = `arm-${op.id.toLowerCase()}`;
  await deps.operations.create(t.namespace, { ...op, credential: name });
  const requester = requesterOf(req);
  await deps.client.create(credentialTypes.revocation, revocationCR(cluster, name, requester));
  req.log.info("Audit: break-glass credentials revocation requested", {
    audit: "breakglass",
    action: "revoke",
    operation: op.id,
    cluster: t.name,
    requester,
    revocation: name,
  });
  return { status: 202, headers: { ...operationHeaders(req, op, true), "retry-after": "1" } };
}
