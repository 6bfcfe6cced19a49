/**
 * HyperShift's control-plane PKI operator, as far as break-glass credentials go: a
 * CertificateSigningRequest for `hypershift.openshift.io/<control-plane namespace>.<class>`, where
 * the class is `customer-break-glass` or `sre-break-glass`, is approved only when a
 * CertificateSigningRequestApproval of the same name exists in that namespace and the request
 * passes HyperShift's checks (the class's CommonName prefix, client auth usage, no DNS, email, IP
 * or URI subjectAltNames), then signed by the control plane's signer of that class (signer.ts)
 * for the duration requested. A CertificateRevocationRequest rotates its class's signer, so every
 * certificate that signer issued before it stops chaining to what the API server trusts, and
 * reports so in its conditions.
 */
import {
  CertificateRevocationRequestResource,
  CertificateSigningRequestApprovalResource,
  CertificateSigningRequestResource,
  commonNamePrefix,
  type CertificateRevocationRequest,
  type CertificateSigningRequest,
  type CertificateSigningRequestApproval,
  type CsrCondition,
} from "../../operators/api/certificates/v1.ts";
import { parseCertificateRequest, type ParsedRequest } from "../../operators/hcp/pkcs10.ts";
import type { Cluster } from "../../operators/runtime/clusters.ts";
import { setCondition, type Condition } from "../../operators/runtime/conditions.ts";
import {
  Controller,
  type ReconcileContext,
  type Request,
  type Result,
} from "../../operators/runtime/controller.ts";
import type { Informer, Lister } from "../../operators/runtime/informer.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";
import type { Logger } from "../../operators/runtime/logger.ts";
import { enqueueForObject, enqueueMapped } from "../../operators/runtime/source.ts";
import { ensureSigner, rotateSigner, sign, SIGNER_SECRETS, type SignerClass } from "./signer.ts";

const SIGNER_PATTERN = /^hypershift\.openshift\.io\/(.+)\.(customer-break-glass|sre-break-glass)$/;
const isSignerClass = (c: string): c is SignerClass => Object.hasOwn(SIGNER_SECRETS, c);
/** Kubernetes' default when a CSR asks for no duration; HyperShift caps it at its certTTL. */
const DEFAULT_EXPIRATION_SECONDS = 86_400;

/** Why HyperShift would refuse to sign this request, if it would. */
function refusal(
  csr: CertificateSigningRequest,
  request: ParsedRequest,
  signerClass: SignerClass,
): string | undefined {
  const prefix = commonNamePrefix(signerClass);
  if (!request.subject.commonName.startsWith(prefix))
    return `invalid certificate request: subject CommonName must begin with "${prefix}"`;
  const usages = csr.spec.usages ?? [];
  if (!usages.includes("client auth")) return "missing required usages: client auth";
  const extra = usages.filter((u) => !["client auth", "digital signature", "key encipherment"].includes(u));
  if (extra.length > 0) return `invalid usages: ${extra.join(", ")}`;
  const { altNames } = request;
  for (const [kind, names] of [
    ["DNS", altNames.dns],
    ["Email", altNames.email],
    ["IP", altNames.ip],
    ["URI", altNames.uri],
  ] as const)
    if (names.length > 0) return `invalid certificate request: ${kind} subjectAltNames are not allowed`;
  return undefined;
}

const isSet = (csr: CertificateSigningRequest, type: CsrCondition["type"]): boolean =>
  csr.status?.conditions?.some((c) => c.type === type && c.status === "True") ?? false;

function csrCondition(type: CsrCondition["type"], reason: string, message: string): CsrCondition {
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  return { type, status: "True", reason, message, lastUpdateTime: now, lastTransitionTime: now };
}

export interface BreakglassSignerDeps {
  cluster: Cluster;
  /** Control-plane namespaces: a signer exists only for a hosted control plane. */
  namespaces: Informer;
  /** The cluster's Secrets, the signers' whole (secret-cache.ts). */
  secrets: Lister<KubeObject>;
  log: Logger;
  workers: number;
}

export class BreakglassSigner {
  readonly #client: KubeClient;
  readonly #csrs: Informer<CertificateSigningRequest>;
  readonly #approvals: Informer<CertificateSigningRequestApproval>;
  readonly #revocations: Informer<CertificateRevocationRequest>;
  readonly #namespaces: Informer;
  readonly #secrets: Lister<KubeObject>;
  readonly #csrController: Controller;
  readonly #crrController: Controller;

  constructor(deps: BreakglassSignerDeps) {
    const { cluster } = deps;
    this.#client = cluster.client;
    this.#namespaces = deps.namespaces;
    this.#secrets = deps.secrets;
    this.#csrs = cluster.informer<CertificateSigningRequest>(CertificateSigningRequestResource);
    this.#approvals = cluster.informer<CertificateSigningRequestApproval>(
      CertificateSigningRequestApprovalResource,
    );
    this.#revocations = cluster.informer<CertificateRevocationRequest>(CertificateRevocationRequestResource);
    this.#csrController = new Controller({
      name: `hypershift-simulator-csr-${cluster.name}`,
      maxConcurrentReconciles: deps.workers,
      log: deps.log,
      reconciler: { reconcile: (ctx, req) => this.#reconcileCsr(ctx, req) },
    });
    this.#crrController = new Controller({
      name: `hypershift-simulator-crr-${cluster.name}`,
      maxConcurrentReconciles: deps.workers,
      log: deps.log,
      reconciler: { reconcile: (ctx, req) => this.#reconcileRevocation(ctx, req) },
    });
    enqueueForObject(this.#csrs, this.#csrController);
    // An approval names its CSR.
    enqueueMapped(this.#approvals, this.#csrController, (a) => [
      { cluster: cluster.name, namespace: "", name: a.metadata.name ?? "" },
    ]);
    enqueueForObject(this.#revocations, this.#crrController);
  }

  get informers(): Informer<KubeObject>[] {
    return [this.#csrs, this.#approvals, this.#revocations] as Informer<KubeObject>[];
  }

  start(signal: AbortSignal): Promise<unknown> {
    return Promise.all([this.#csrController.start(signal), this.#crrController.start(signal)]);
  }

  /** The control plane namespace and signer class a CSR names, when it is a break-glass signer of one here. */
  #signerOf(csr: CertificateSigningRequest): { namespace: string; signerClass: SignerClass } | undefined {
    const [, namespace, signerClass] = SIGNER_PATTERN.exec(csr.spec.signerName) ?? [];
    if (!namespace || !signerClass || !isSignerClass(signerClass) || !this.#namespaces.get("", namespace))
      return undefined;
    return { namespace, signerClass };
  }

  async #reconcileCsr(ctx: ReconcileContext, req: Request): Promise<Result> {
    const csr = this.#csrs.get("", req.name);
    if (!csr || csr.status?.certificate || isSet(csr, "Denied") || isSet(csr, "Failed")) return {};
    const target = this.#signerOf(csr);
    if (!target) return {};
    const { namespace, signerClass } = target;
    if (!isSet(csr, "Approved")) {
      // No approval, no certificate: the CSR waits (the approval's watch brings it back).
      if (!this.#approvals.get(namespace, req.name)) return {};
      await this.#decide(ctx, csr, signerClass);
      return {};
    }
    const request = await parseCertificateRequest(Buffer.from(csr.spec.request, "base64").toString("utf8"));
    const signer = await ensureSigner(this.#client, namespace, signerClass, this.#secrets);
    const certificate = await sign(signer, request, csr.spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS);
    await this.#client.mergePatch(
      CertificateSigningRequestResource,
      { name: req.name },
      { status: { certificate: Buffer.from(certificate, "utf8").toString("base64") } },
      { subresource: "status", signal: ctx.signal },
    );
    ctx.log.info("Signed a break-glass certificate", { csr: req.name, namespace, signerClass });
    return {};
  }

  /** Approves a request HyperShift would sign, denies one it would not. */
  async #decide(
    ctx: ReconcileContext,
    csr: CertificateSigningRequest,
    signerClass: SignerClass,
  ): Promise<void> {
    let problem: string | undefined;
    try {
      problem = refusal(
        csr,
        await parseCertificateRequest(Buffer.from(csr.spec.request, "base64").toString("utf8")),
        signerClass,
      );
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    const condition = problem
      ? csrCondition("Denied", "CertificateSigningRequestInvalid", problem)
      : csrCondition(
          "Approved",
          "ApprovedByCertificateSigningRequestApproval",
          "The break-glass request is approved",
        );
    await this.#client.mergePatch(
      CertificateSigningRequestResource,
      { name: csr.metadata.name ?? "" },
      { status: { conditions: [...(csr.status?.conditions ?? []), condition] } },
      { subresource: "approval", signal: ctx.signal },
    );
  }

  /** A revocation rotates the control plane's signer once, at its revocation timestamp. */
  async #reconcileRevocation(ctx: ReconcileContext, req: Request): Promise<Result> {
    const crr = this.#revocations.get(req.namespace, req.name);
    if (!crr || crr.metadata.deletionTimestamp) return {};
    const done = crr.status?.conditions?.some(
      (c) => c.type === "PreviousCertificatesRevoked" && c.status === "True",
    );
    if (done) return {};
    const stamp = { observedGeneration: crr.metadata.generation };
    let conditions: Condition[] = crr.status?.conditions ?? [];
    const signerClass = crr.spec.signerClass;
    if (!isSignerClass(signerClass)) {
      conditions = setCondition(
        conditions,
        {
          type: "SignerClassValid",
          status: "False",
          reason: "SignerClassUnknown",
          message: `Signer class "${String(crr.spec.signerClass)}" is not simulated.`,
        },
        stamp,
      );
      await this.#writeRevocation(ctx, crr, { conditions });
      return {};
    }
    const revocationTimestamp =
      crr.status?.revocationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, "Z");
    await rotateSigner(this.#client, req.namespace, signerClass, new Date(revocationTimestamp));
    const secret = `${req.namespace}/${SIGNER_SECRETS[signerClass]}`;
    const ok = (type: string, message: string) =>
      (conditions = setCondition(conditions, { type, status: "True", reason: "AsExpected", message }, stamp));
    ok("SignerClassValid", `Signer class "${signerClass}" known.`);
    ok("RootCertificatesRegenerated", `Signer certificate ${secret} regenerated.`);
    ok("NewCertificatesTrusted", `New signer certificate ${secret} trusted.`);
    ok("LeafCertificatesRegenerated", "All leaf certificates are re-generated.");
    ok("PreviousCertificatesRevoked", "Previous signer certificate revoked.");
    await this.#writeRevocation(ctx, crr, { revocationTimestamp, conditions });
    ctx.log.info("Revoked the break-glass certificates of a control plane", {
      namespace: req.namespace,
      signerClass,
    });
    return {};
  }

  async #writeRevocation(
    ctx: ReconcileContext,
    crr: CertificateRevocationRequest,
    status: NonNullable<CertificateRevocationRequest["status"]>,
  ): Promise<void> {
    await this.#client.mergePatch(
      CertificateRevocationRequestResource,
      { name: crr.metadata.name ?? "", namespace: crr.metadata.namespace },
      { status },
      { subresource: "status", signal: ctx.signal },
    );
  }
}
