/**
 * The SRE portal process (`hcp-operators portal`, decision 0014): HTTPS pages over the service
 * cluster's informer caches, signed in through the region's OpenID Connect provider.
 *
 *   --kubeconfig <path>          service cluster, as the portal's identity in hcp:session-brokers
 *   --listen <host:port>         HTTPS address (default 0.0.0.0:8444)
 *   --tls-cert / --tls-key       serving certificate and key (PEM)
 *   --public-url <url>           the origin browsers use, e.g. https://portal.example:8444
 *   --issuer <url>               the OpenID Connect issuer
 *   --issuer-ca <path>           CA bundle of the issuer's certificate (default: the system's)
 *   --client-id <id>             the portal's client at the issuer
 *   --client-secret-file <path>  its secret
 *   --session-key-file <path>    32 bytes sealing the session cookie (the same on every replica)
 *   --session-seconds <n>        sign-in lifetime (default 28800)
 *   --role <group=role>          repeatable; role is viewer, operator or approver
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { KubeClient } from "../runtime/kube.ts";
import { loadClusterAccess } from "../runtime/kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import { Manager, signalHandler } from "../runtime/manager.ts";
import { portalApp } from "./app.ts";
import { KubePortalBackend } from "./backend.ts";
import { parseRoleMap } from "./roles.ts";
import { PortalServer } from "./server.ts";
import { sessionKey } from "./session-cookie.ts";
import { discoverIssuer, signInRoutes } from "./signin.ts";

function required(value: string | undefined, flag: string): string {
  if (!value) throw new Error(`${flag} is required`);
  return value;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      listen: { type: "string", default: "0.0.0.0:8444" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "public-url": { type: "string" },
      issuer: { type: "string" },
      "issuer-ca": { type: "string" },
      "client-id": { type: "string" },
      "client-secret-file": { type: "string" },
      "session-key-file": { type: "string" },
      "session-seconds": { type: "string", default: "28800" },
      role: { type: "string", multiple: true, default: [] },
    },
  });
  const log = createLogger({ component: "portal" });
  const i = values.listen.lastIndexOf(":");
  const port = Number(values.listen.slice(i + 1));
  if (i < 0 || !Number.isInteger(port)) throw new Error(`--listen expects host:port, got "${values.listen}"`);
  const publicOrigin = new URL(required(values["public-url"], "--public-url")).origin;
  const sessionSeconds = Number(values["session-seconds"]);
  if (!Number.isInteger(sessionSeconds) || sessionSeconds < 60) {
    throw new Error(
      `--session-seconds expects a whole number of seconds ≥ 60, got "${values["session-seconds"]}"`,
    );
  }
  const key = sessionKey(await readFile(required(values["session-key-file"], "--session-key-file")));
  const signInOpts = {
    issuer: new URL(required(values.issuer, "--issuer")),
    clientId: required(values["client-id"], "--client-id"),
    clientSecret: (
      await readFile(required(values["client-secret-file"], "--client-secret-file"), "utf8")
    ).trim(),
    ...(values["issuer-ca"] ? { issuerCA: await readFile(values["issuer-ca"], "utf8") } : {}),
    publicOrigin,
    key,
    sessionSeconds,
  };
  const access = loadClusterAccess(values.kubeconfig ? { path: values.kubeconfig } : { default: true });
  const backend = new KubePortalBackend(new KubeClient("service", access));
  const app = portalApp({
    key,
    publicOrigin,
    roleMap: parseRoleMap(values.role),
    backend,
    audit: (line) => process.stdout.write(`${JSON.stringify(line)}\n`),
    signIn: signInRoutes(signInOpts, await discoverIssuer(signInOpts)),
  });
  const manager = new Manager({ log });
  manager.add({ needLeaderElection: false, start: (signal) => backend.run(signal) });
  manager.add(
    new PortalServer({
      fetch: app.fetch,
      host: values.listen.slice(0, i),
      port,
      tls: {
        cert: await readFile(required(values["tls-cert"], "--tls-cert")),
        key: await readFile(required(values["tls-key"], "--tls-key")),
      },
      log,
    }),
  );
  await manager.start(signalHandler(log));
}

main().catch((err: unknown) => {
  process.stderr.write(`portal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
