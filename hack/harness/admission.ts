/**
 * The service cluster's admission policies (config/bases/operators/admission.yaml: the controllers'
 * finalizers set on every HcpCluster and NodePool at creation; the update graph, its parameters
 * read from the namespace the operators run in), installed where the region's controllers run and
 * removed again by whoever installed it: the tests share one apiserver, and tests that run no
 * controllers must be able to delete what they create.
 */
import { readFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { loadAll } from "js-yaml";
import { NODE_POOL_FINALIZER, NodePoolResource, type NodePool } from "../../operators/api/v1alpha1/index.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { waitFor } from "./ports.ts";

const ADMISSION_FILE = new URL("../../config/bases/operators/admission.yaml", import.meta.url);
const SAMPLE_POOL = new URL("../../config/samples/nodepool-fixed.yaml", import.meta.url);

const admissionType = (plural: string, kind: string): ResourceType => ({
  group: "admissionregistration.k8s.io",
  version: "v1",
  plural,
  kind,
  namespaced: false,
});

const TYPES: Record<string, ResourceType> = {
  MutatingAdmissionPolicy: admissionType("mutatingadmissionpolicies", "MutatingAdmissionPolicy"),
  MutatingAdmissionPolicyBinding: admissionType(
    "mutatingadmissionpolicybindings",
    "MutatingAdmissionPolicyBinding",
  ),
  ValidatingAdmissionPolicy: admissionType("validatingadmissionpolicies", "ValidatingAdmissionPolicy"),
  ValidatingAdmissionPolicyBinding: admissionType(
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
  ),
};

/** A binding's parameters are read from the namespace the region's operators run in. */
function inNamespace(obj: KubeObject, namespace: string): KubeObject {
  const spec = obj["spec"] as { paramRef?: { namespace?: string } } | undefined;
  if (!spec?.paramRef) return obj;
  return { ...obj, spec: { ...spec, paramRef: { ...spec.paramRef, namespace } } };
}

async function policyObjects(
  namespace = "hcp-system",
): Promise<Array<{ type: ResourceType; obj: KubeObject }>> {
  const docs = loadAll(await readFile(ADMISSION_FILE, "utf8")) as KubeObject[];
  return docs.map((obj) => {
    const type = TYPES[obj.kind ?? ""];
    if (!type) throw new Error(`${ADMISSION_FILE.pathname}: unexpected kind ${obj.kind}`);
    return { type, obj: inNamespace(obj, namespace) };
  });
}

/**
 * Applies the policy and waits until the apiserver enforces it (policies take effect a moment
 * after they are stored): a probe NodePool in `namespace` must come back with its finalizer.
 */
export async function installAdmission(service: KubeClient, namespace: string): Promise<void> {
  for (const { type, obj } of await policyObjects(namespace))
    await service.apply(type, obj, { fieldManager: "hcp-harness", force: true });
  const sample = (loadAll(await readFile(SAMPLE_POOL, "utf8")) as NodePool[])[0];
  if (!sample) throw new Error(`${SAMPLE_POOL.pathname} holds no NodePool`);
  await waitFor(
    "the admission policy in effect",
    async () => {
      const name = `admission-probe-${randomBytes(4).toString("hex")}`;
      const probe = await service.create<NodePool>(NodePoolResource, {
        ...sample,
        metadata: { name, namespace },
      });
      const enforced = probe.metadata.finalizers?.includes(NODE_POOL_FINALIZER) ?? false;
      if (enforced)
        await service.mergePatch(NodePoolResource, { name, namespace }, { metadata: { finalizers: null } });
      await service.delete(NodePoolResource, { name, namespace });
      return enforced;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}

/** Removes the policy; objects created meanwhile keep their finalizers. */
export async function removeAdmission(service: KubeClient): Promise<void> {
  for (const { type, obj } of (await policyObjects()).reverse())
    await service.delete(type, { name: obj.metadata.name ?? "" });
}
