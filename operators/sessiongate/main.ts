/**
 * The session gate process (`hcp-operators gate`, issue 36): every replica serves
 * /sessions/{name}/kas/* over HTTPS to sessions' owners, signed in with OpenID Connect.
 *
 *   --kubeconfig <path>            service cluster (reads AccessSessions and their Secrets)
 *   --namespace <ns>               the operators' namespace, where the credential Secrets are
 *   --listen <host:port>           HTTPS address (default 0.0.0.0:8445)
 *   --tls-cert / --tls-key         serving certificate and key (PEM)
 *   --gate-oidc-issuer <url>       the OpenID Connect issuer
 *   --gate-oidc-audience <id>      repeatable: client IDs whose ID tokens are accepted
 *   --gate-oidc-ca <path>          CA bundle of the issuer (default: the system's)
 *   --gate-oidc-user-claim <name>  the claim compared with spec.owner (default email)
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { KubeClient } from "../runtime/kube.ts";
import { loadClusterAccess } from "../runtime/kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import { Manager, signalHandler } from "../runtime/manager.ts";
import { oidcAuthenticator } from "./oidc.ts";
import { GateServer } from "./server.ts";

function required(value: string | undefined, flag: string): string {
  if (!value) throw new Error(`${flag} is required`);
  return value;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      namespace: { type: "string" },
      listen: { type: "string", default: "0.0.0.0:8445" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "gate-oidc-issuer": { type: "string" },
      "gate-oidc-audience": { type: "string", multiple: true, default: [] },
      "gate-oidc-ca": { type: "string" },
      "gate-oidc-user-claim": { type: "string", default: "email" },
    },
  });
  const log = createLogger({ component: "gate" });
  const authenticate = oidcAuthenticator({
    issuer: required(values["gate-oidc-issuer"], "--gate-oidc-issuer"),
    audiences: values["gate-oidc-audience"],
    userClaim: values["gate-oidc-user-claim"],
    ...(values["gate-oidc-ca"] ? { caPem: await readFile(values["gate-oidc-ca"], "utf8") } : {}),
  });
  const namespace = required(values.namespace, "--namespace");
  const tls = {
    cert: await readFile(required(values["tls-cert"], "--tls-cert")),
    key: await readFile(required(values["tls-key"], "--tls-key")),
  };
  const access = loadClusterAccess(values.kubeconfig ? { path: values.kubeconfig } : { default: true });
  const manager = new Manager({ log });
  manager.add(
    new GateServer({
      client: new KubeClient("service", access),
      namespace,
      authenticate,
      address: values.listen,
      tls,
      log,
    }),
  );
  await manager.start(signalHandler(log));
}

main().catch((err: unknown) => {
  process.stderr.write(`gate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
