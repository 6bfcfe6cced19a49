/**
 * The session gate as a Runnable every replica runs (not leader-elected): an HTTPS server in
 * front of SessionGate, with its own informers on AccessSessions and on the sessions' credential
 * Secrets, so each replica cuts a session's traffic the moment its own cache sees the end.
 */
import { createServer, type Server } from "node:https";
import {
  ACCESS_SESSION_LABEL,
  AccessSessionResource,
  type AccessSession,
} from "../api/v1alpha1/accesssession.ts";
import { SecretResource } from "../api/core.ts";
import type { KubeObject } from "../api/meta/v1.ts";
import { Informer } from "../runtime/informer.ts";
import type { KubeClient } from "../runtime/kube.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Runnable } from "../runtime/manager.ts";
import { SessionGate, type Authenticate } from "./gate.ts";
import { gateMetrics } from "./metrics.ts";

interface CredentialSecret extends KubeObject {
  data?: Record<string, string>;
}

export interface GateServerOptions {
  client: KubeClient;
  /** The operators' namespace, where the session controller keeps the credential Secrets. */
  namespace: string;
  authenticate: Authenticate;
  /** "host:port" to listen on. */
  address: string;
  tls: { cert: string | Buffer; key: string | Buffer };
  log: Logger;
  /** Called with the bound port once listening (tests use port 0). */
  onListening?: (port: number) => void;
}

function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  const port = Number(address.slice(at + 1));
  if (at < 0 || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`the gate's address "${address}" is not host:port`);
  return { host: address.slice(0, at).replace(/^\[|\]$/g, "") || "0.0.0.0", port };
}

export class GateServer implements Runnable {
  readonly needLeaderElection = false;
  readonly #opts: GateServerOptions;
  readonly sessions: Informer<AccessSession>;
  readonly secrets: Informer<CredentialSecret>;
  readonly gate: SessionGate;

  constructor(opts: GateServerOptions) {
    this.#opts = opts;
    this.sessions = new Informer<AccessSession>({
      client: opts.client,
      type: AccessSessionResource,
      log: opts.log,
    });
    this.secrets = new Informer<CredentialSecret>({
      client: opts.client,
      type: SecretResource,
      namespace: opts.namespace,
      labelSelector: ACCESS_SESSION_LABEL,
      log: opts.log,
    });
    this.gate = new SessionGate({
      authenticate: opts.authenticate,
      log: opts.log.child({ component: "sessiongate" }),
      metrics: gateMetrics(),
      sources: {
        session: (name) => this.sessions.get("", name),
        credential: (secret) => {
          const s = this.secrets.get(opts.namespace, secret);
          const data = s?.data?.kubeconfig;
          if (!s || !data) return undefined;
          return {
            resourceVersion: s.metadata.resourceVersion ?? "",
            kubeconfig: Buffer.from(data, "base64").toString("utf8"),
          };
        },
      },
    });
    const changed = (s: AccessSession): void => this.gate.sessionChanged(s.metadata.name ?? "");
    this.sessions.addEventHandler({ onUpdate: (_old, s) => changed(s), onDelete: changed });
  }

  async start(signal: AbortSignal): Promise<void> {
    const { host, port } = splitAddress(this.#opts.address);
    const informers = [this.sessions.run(signal), this.secrets.run(signal)];
    await Promise.all([this.sessions.waitForSync(signal), this.secrets.waitForSync(signal)]);
    if (signal.aborted) {
      await Promise.allSettled(informers);
      return;
    }
    const server: Server = createServer(this.#opts.tls, (req, res) => this.gate.handle(req, res));
    server.on("upgrade", (req, socket, head) => this.gate.upgrade(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    const bound = server.address();
    this.#opts.onListening?.(typeof bound === "object" && bound ? bound.port : port);
    this.#opts.log.info("Serving the session gate", { address: this.#opts.address });
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    this.gate.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await Promise.allSettled(informers);
  }
}
