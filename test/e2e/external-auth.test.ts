/**
 * An ExternalAuth's life on the local region: applied beside its HcpCluster on the service
 * cluster, carried by the cluster controller into the HostedCluster's
 * spec.configuration.authentication (type OIDC) over MQTT to a management cluster, validated by
 * the HyperShift simulator, reported back as the ExternalAuth's status. Then an update, a second
 * ExternalAuth that must wait (one per cluster), one HyperShift refuses, a delete that takes the
 * provider off the HostedCluster, and a cluster delete that takes the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HOSTED_CLUSTER_SOURCED_ANNOTATION,
  HostedClusterResource,
  type AuthenticationSpec,
  type HostedCluster,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import {
  ExternalAuthResource,
  HcpClusterResource,
  type ExternalAuth,
  type HcpCluster,
} from "../../operators/api/v1alpha1/index.ts";
import type { Condition } from "../../operators/runtime/conditions.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, configMapType, eventually, namespaceType, secretType } from "../support/fixtures.ts";
import { ISSUER_CA_PEM } from "../support/oidc.ts";
import { sampleCluster, sampleExternalAuth } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const LIFECYCLE_MS = 90_000;
const service = clientFor("service");
const customer = `auth-${process.pid}`;
let running: TestStack | undefined;

const cond = (
  o: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined => o?.status?.conditions?.find((c) => c.type === type);
const getAuth = (name: string) => service.find<ExternalAuth>(ExternalAuthResource, name, customer);

beforeAll(async () => {
  running = await startTestStack("extauth", { simulator: { provisionDelayMs: 500, deleteDelayMs: 200 } });
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  await running?.stop();
});

describe("external auth", () => {
  const cluster = sampleCluster();
  cluster.metadata = { name: "oidc", namespace: customer };
  cluster.spec.dns.baseDomainPrefix = `ea${process.pid % 100000}`;
  delete cluster.spec.placement;
  const entra = sampleExternalAuth();
  entra.metadata = { name: "entra", namespace: customer };
  entra.spec.clusterRef.name = "oidc";
  entra.spec.issuer.ca = ISSUER_CA_PEM;

  let mgmt: KubeClient;
  let hcNamespace = "";
  const authentication = async (): Promise<AuthenticationSpec | undefined> =>
    (await mgmt.find<HostedCluster>(HostedClusterResource, cluster.spec.dns.baseDomainPrefix, hcNamespace))
      ?.spec.configuration?.authentication;

  it("carries an ExternalAuth applied with its cluster into the HostedCluster, and reports it Ready", async () => {
    await service.create(HcpClusterResource, cluster);
    await service.create(ExternalAuthResource, entra);
    await eventually(
      "the ExternalAuth Ready",
      async () => cond(await getAuth("entra"), "Ready")?.status === "True",
      LIFECYCLE_MS,
    );
    const c = (await service.find<HcpCluster>(HcpClusterResource, "oidc", customer))!;
    hcNamespace = c.status?.hostedClusterNamespace ?? "";
    mgmt = clientFor(c.status!.managementCluster!);
    const auth = (await getAuth("entra"))!;
    expect(auth.metadata.finalizers).toContain("hcp.aro.dev/externalauth");
    expect(auth.status).toMatchObject({ phase: "Ready", observedGeneration: 1 });
    for (const step of ["ClusterReady", "ProviderApplied", "ProviderAccepted"])
      expect(cond(auth, step)?.status, step).toBe("True");
    expect(await authentication()).toEqual({
      type: "OIDC",
      oidcProviders: [
        {
          name: "entra",
          issuer: {
            issuerURL: entra.spec.issuer.url,
            audiences: entra.spec.issuer.audiences,
            issuerCertificateAuthority: { name: "entra-issuer-ca" },
          },
          oidcClients: [
            {
              componentName: "console",
              componentNamespace: "openshift-console",
              clientID: entra.spec.clients![0]!.clientId,
              clientSecret: { name: "entra-console-client-secret" },
            },
            {
              componentName: "cli",
              componentNamespace: "openshift-console",
              clientID: entra.spec.clients![1]!.clientId,
            },
          ],
          claimMappings: {
            username: { claim: "email", prefixPolicy: "NoPrefix" },
            groups: { claim: "groups" },
          },
          claimValidationRules: entra.spec.claim.validationRules,
        },
      ],
    });
    const ca = await mgmt.find<KubeObject & { data?: Record<string, string> }>(
      configMapType,
      "entra-issuer-ca",
      hcNamespace,
    );
    expect(ca?.data?.["ca-bundle.crt"]).toBe(ISSUER_CA_PEM);
    // The console's secret is the customer's to put in on their cluster: HyperShift is handed an empty one.
    const secret = await mgmt.find<KubeObject & { data?: Record<string, string> }>(
      secretType,
      "entra-console-client-secret",
      hcNamespace,
    );
    expect(secret?.metadata.annotations?.[HOSTED_CLUSTER_SOURCED_ANNOTATION]).toBe("true");
    expect(secret?.data ?? {}).toEqual({});
  });

  it("rolls an update out to the HostedCluster and observes it at the new generation", async () => {
    await service.mergePatch(
      ExternalAuthResource,
      { name: "entra", namespace: customer },
      { spec: { issuer: { audiences: ["3f2c1a9e-7b4d-4e8a-9c1f-2d5e6a7b8c9d", "api://oidc-demo"] } } },
    );
    await eventually(
      "the update observed and Ready",
      async () => {
        const a = await getAuth("entra");
        return a?.status?.observedGeneration === 2 && cond(a, "Ready")?.status === "True";
      },
      LIFECYCLE_MS,
    );
    expect((await authentication())?.oidcProviders?.[0]?.issuer.audiences).toEqual([
      "3f2c1a9e-7b4d-4e8a-9c1f-2d5e6a7b8c9d",
      "api://oidc-demo",
    ]);
  });

  it("keeps a second ExternalAuth out of the HostedCluster (one per cluster) and says why", async () => {
    const second = sampleExternalAuth();
    second.metadata = { name: "second", namespace: customer };
    second.spec.clusterRef.name = "oidc";
    await service.create(ExternalAuthResource, second);
    await eventually(
      "the second ExternalAuth Degraded",
      async () => cond(await getAuth("second"), "Degraded")?.status === "True",
      LIFECYCLE_MS,
    );
    const s = await getAuth("second");
    expect(cond(s, "Degraded")?.reason).toBe("OneExternalAuthPerCluster");
    expect(s?.status?.phase).toBe("Degraded");
    expect((await authentication())?.oidcProviders?.map((p) => p.name)).toEqual(["entra"]);
  });

  it("takes a deleted ExternalAuth off the HostedCluster before it goes, and lets the next one in", async () => {
    await service.delete(ExternalAuthResource, { name: "entra", namespace: customer });
    await eventually("entra gone", async () => (await getAuth("entra")) === undefined, LIFECYCLE_MS);
    // The finalizer went only once the work without it was applied: the HostedCluster then
    // carried no provider or already the next one, never entra.
    expect((await authentication())?.oidcProviders?.map((p) => p.name) ?? []).not.toContain("entra");
    await eventually(
      "the second ExternalAuth carried and Ready",
      async () => cond(await getAuth("second"), "Ready")?.status === "True",
      LIFECYCLE_MS,
    );
    expect((await authentication())?.oidcProviders?.map((p) => p.name)).toEqual(["second"]);
    expect(await mgmt.find(configMapType, "entra-issuer-ca", hcNamespace)).toBeUndefined();
  });

  it("reports HyperShift's refusal of a provider as Degraded with HyperShift's message", async () => {
    // HyperShift refuses an external issuer that is the cluster's own service-account issuer.
    const own = (await service.find<HcpCluster>(HcpClusterResource, "oidc", customer))?.status?.issuerURL;
    expect(own).toMatch(/^https:\/\//);
    await service.mergePatch(
      ExternalAuthResource,
      { name: "second", namespace: customer },
      { spec: { issuer: { url: own } } },
    );
    await eventually(
      "the refusal reported",
      // ProviderAccepted is False while it waits too: wait for the refusal itself.
      async () => cond(await getAuth("second"), "Degraded")?.reason === "HostedClusterInvalidConfiguration",
      LIFECYCLE_MS,
    );
    const s = (await getAuth("second"))!;
    expect(cond(s, "Degraded")).toMatchObject({
      status: "True",
      reason: "HostedClusterInvalidConfiguration",
    });
    expect(cond(s, "Degraded")?.message).toContain("must not be the cluster's own issuer");
  });

  it("deletes a cluster's ExternalAuths with it, leaving nothing behind", async () => {
    await service.delete(HcpClusterResource, { name: "oidc", namespace: customer });
    await eventually(
      "the cluster and its ExternalAuths gone",
      async () => {
        const [c, list] = await Promise.all([
          service.find(HcpClusterResource, "oidc", customer),
          service.list<ExternalAuth>(ExternalAuthResource, { namespace: customer }),
        ]);
        return c === undefined && list.items.length === 0;
      },
      LIFECYCLE_MS,
    );
    expect(
      await mgmt.find(HostedClusterResource, cluster.spec.dns.baseDomainPrefix, hcNamespace),
    ).toBeUndefined();
  });
});
