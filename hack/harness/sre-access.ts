/**
 * SRE access for a local or test region (issue 36): Dex with its people, the session gate and the
 * portal in this process over TLS, each with an identity of its own on the service cluster
 * (client certificates: the portal in hcp:session-brokers) bound to the roles of
 * config/bases/sre, the people's roles (config/bases/operators/access-sessions-rbac.yaml) bound
 * to their groups, and a kubeconfig per person for hcpctl and kubectl.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { KubeConfig } from "@kubernetes/client-node";
import { KubePortalBackend } from "../../operators/portal/backend.ts";
import { portalApp } from "../../operators/portal/app.ts";
import { parseRoleMap } from "../../operators/portal/roles.ts";
import { PortalServer } from "../../operators/portal/server.ts";
import { discoverIssuer, signInRoutes } from "../../operators/portal/signin.ts";
import { oidcAuthenticator } from "../../operators/sessiongate/oidc.ts";
import { GateServer } from "../../operators/sessiongate/server.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { silentLogger, type Logger } from "../../operators/runtime/logger.ts";
import { createCA, issueCert } from "./certs.ts";
import { DEX_GROUP_ROLES, DEFAULT_DEX_USERS, startDex, type Dex, type DexUserSpec } from "./dex.ts";
import { personKubeconfig } from "./people.ts";
import { freePort, waitFor } from "./ports.ts";

const rbacType = (plural: string, kind: string, namespaced: boolean): ResourceType => ({
  group: plural === "serviceaccounts" ? "" : "rbac.authorization.k8s.io",
  version: "v1",
  plural,
  kind,
  namespaced,
});
const TYPES: Record<string, ResourceType> = {
  ServiceAccount: rbacType("serviceaccounts", "ServiceAccount", true),
  ClusterRole: rbacType("clusterroles", "ClusterRole", false),
  ClusterRoleBinding: rbacType("clusterrolebindings", "ClusterRoleBinding", false),
  Role: rbacType("roles", "Role", true),
  RoleBinding: rbacType("rolebindings", "RoleBinding", true),
};

const SRE_RBAC = new URL("../../config/bases/sre/rbac.yaml", import.meta.url);
const PEOPLE_RBAC = new URL("../../config/bases/operators/access-sessions-rbac.yaml", import.meta.url);

/** The portal's and the gate's names on the service cluster (their client certificates' CN). */
const PORTAL_USER = "hcp-portal";
const GATE_USER = "hcp-gate";

/** Which of the people's roles each Dex group gets: SREs ask and approve each other's sessions. */
const PEOPLE_BINDINGS: Array<{ group: string; role: string }> = [
  { group: "sre", role: "hcp-session-requester" },
  { group: "sre", role: "hcp-session-approver" },
  { group: "approvers", role: "hcp-session-approver" },
];

export interface SreAccessOptions {
  /** The region's work dir; Dex, certificates and kubeconfigs go under `<workDir>/sre-access/`. */
  workDir: string;
  /** The service apiserver's directory (its client and serving CAs) and URL. */
  serviceApiServerDir: string;
  serviceServer: string;
  /** An administrator of the service cluster: installs the roles and bindings. */
  admin: KubeClient;
  /** The operators' namespace, where the session credentials are. */
  namespace: string;
  users?: readonly DexUserSpec[];
  log?: Logger;
}

export interface SrePerson {
  username: string;
  email: string;
  password: string;
  groups: string[];
  /** The service cluster as this person (hcpctl session …). */
  kubeconfigPath: string;
}

export interface SreAccess {
  dex: Dex;
  portal: { url: string; caPath: string };
  gate: { url: string; caPath: string };
  people: SrePerson[];
  stop(): Promise<void>;
}

function inNamespace(obj: KubeObject, namespace: string): KubeObject {
  const meta = obj.metadata.namespace ? { ...obj.metadata, namespace } : obj.metadata;
  const subjects = (obj as { subjects?: Array<{ namespace?: string }> }).subjects?.map((s) =>
    s.namespace ? { ...s, namespace } : s,
  );
  return { ...obj, metadata: meta, ...(subjects ? { subjects } : {}) };
}

async function applyAll(admin: KubeClient, objs: KubeObject[]): Promise<void> {
  for (const obj of objs) {
    const type = TYPES[obj.kind ?? ""];
    if (!type) throw new Error(`unexpected ${obj.kind ?? "?"} in the SRE RBAC`);
    await admin.apply(type, obj, { fieldManager: "hcp-harness", force: true });
  }
}

const binding = (name: string, role: string, kind: "User" | "Group", subject: string): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: [{ kind, apiGroup: "rbac.authorization.k8s.io", name: subject }],
});

/** config/bases/sre and the people's roles, with the harness's certificate identities bound to them. */
async function installRbac(opts: SreAccessOptions): Promise<void> {
  const docs = async (url: URL) =>
    (loadAll(await readFile(url, "utf8")) as KubeObject[]).map((o) => inNamespace(o, opts.namespace));
  await applyAll(opts.admin, [...(await docs(SRE_RBAC)), ...(await docs(PEOPLE_RBAC))]);
  await applyAll(opts.admin, [
    binding("hcp-portal-harness", "hcp-portal", "User", PORTAL_USER),
    binding("hcp-gate-harness", "hcp-gate", "User", GATE_USER),
    ...PEOPLE_BINDINGS.map(({ group, role }) => binding(`${role}-${group}`, role, "Group", group)),
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "hcp-gate-credentials-harness", namespace: opts.namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "hcp-gate-credentials" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: GATE_USER }],
    },
  ]);
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

function clientOf(kubeconfigPath: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return new KubeClient("service", kc);
}

export async function startSreAccess(opts: SreAccessOptions): Promise<SreAccess> {
  const dir = join(opts.workDir, "sre-access");
  const log = opts.log ?? silentLogger;
  await mkdir(dir, { recursive: true });
  const ca = await createCA(dir, "sre-serving");
  const serving = await issueCert(ca, dir, {
    name: "sre-serving",
    commonName: "sre-access",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const tls = { cert: await readFile(serving.certPath), key: await readFile(serving.keyPath) };
  const [portalPort, gatePort] = [await freePort(), await freePort()];
  const portalUrl = `https://127.0.0.1:${portalPort}`;
  const dex = await startDex({
    workDir: opts.workDir,
    users: opts.users ?? DEFAULT_DEX_USERS,
    portalRedirectURIs: [`${portalUrl}/callback`],
  });
  const stop = new AbortController();
  const running: Array<Promise<unknown>> = [];
  try {
    await installRbac(opts);
    const identity = (stem: string, name: string, groups: string[]) =>
      personKubeconfig({
        apiServerDir: opts.serviceApiServerDir,
        server: opts.serviceServer,
        outDir: join(dir, "identities"),
        stem,
        name,
        groups,
      });
    const people = await Promise.all(
      dex.users.map(async (u) => ({
        username: u.username,
        email: u.email,
        password: u.password,
        groups: u.groups,
        kubeconfigPath: await identity(u.username, u.email, u.groups),
      })),
    );
    const dexCA = await readFile(dex.caPath, "utf8");

    let gatePortBound: (port: number) => void = () => undefined;
    const gateListening = new Promise<number>((resolve) => (gatePortBound = resolve));
    const gate = new GateServer({
      client: clientOf(await identity("gate", GATE_USER, [])),
      namespace: opts.namespace,
      authenticate: oidcAuthenticator({
        issuer: dex.issuer,
        audiences: [dex.portal.clientId, dex.hcpctl.clientId],
        caPem: dexCA,
      }),
      address: `127.0.0.1:${gatePort}`,
      tls,
      log: log.child({ component: "gate" }),
      onListening: (port) => gatePortBound(port),
    });
    running.push(gate.start(stop.signal));
    await gateListening;

    const key = randomBytes(32);
    const signInOpts = {
      issuer: new URL(dex.issuer),
      clientId: dex.portal.clientId,
      clientSecret: dex.portal.clientSecret,
      issuerCA: dexCA,
      publicOrigin: portalUrl,
      key,
      sessionSeconds: 8 * 3600,
    };
    const backend = new KubePortalBackend(
      clientOf(await identity("portal", PORTAL_USER, ["hcp:session-brokers"])),
    );
    const app = portalApp({
      key,
      publicOrigin: portalUrl,
      roleMap: parseRoleMap(DEX_GROUP_ROLES),
      backend,
      audit: (line) => log.info("portal audit", { ...line }),
      signIn: signInRoutes(signInOpts, await discoverIssuer(signInOpts)),
    });
    running.push(backend.run(stop.signal));
    const portalLog = log.child({ component: "portal" });
    running.push(
      new PortalServer({ fetch: app.fetch, host: "127.0.0.1", port: portalPort, tls, log: portalLog }).start(
        stop.signal,
      ),
    );
    await waitFor("the portal", () => accepts(portalPort), { timeoutMs: 20_000, intervalMs: 50 });
    return {
      dex,
      portal: { url: portalUrl, caPath: ca.certPath },
      gate: { url: `https://127.0.0.1:${gatePort}`, caPath: ca.certPath },
      people,
      stop: async () => {
        stop.abort();
        await Promise.allSettled(running);
        await dex.stop();
      },
    };
  } catch (err) {
    stop.abort();
    await Promise.allSettled(running);
    await dex.stop();
    throw err;
  }
}
