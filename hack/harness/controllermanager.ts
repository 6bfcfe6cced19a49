/**
 * A real kube-controller-manager beside each kube-apiserver, running only the controllers that do
 * their work without nodes: the namespace controller (a deleted namespace is emptied and goes away
 * instead of staying Terminating) and the garbage collector (dependents of a deleted owner are
 * deleted by their ownerReferences, foreground and background). Everything that schedules pods,
 * manages nodes or mints service-account tokens stays off.
 *
 * Timing: the namespace controller waits a fixed 5 s grace period after a namespace is deleted
 * before it empties it, so a namespace deletion takes a little over 5 s.
 */
import { request } from "node:https";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { freePort, waitFor } from "./ports.ts";
import { startProcess, type ManagedProcess } from "./process.ts";

/**
 * Controller names as kube-controller-manager v1.36 spells them (`--help`, `--controllers`). The
 * garbage collector also serves foreground deletion: it removes the `foregroundDeletion`
 * finalizer once the dependents are gone.
 */
export const CONTROLLERS = ["namespace-controller", "garbage-collector-controller"] as const;

export interface StartControllerManagerOptions {
  /** Cluster name: file names (`kube-controller-manager-<name>.log` and `.pid`). */
  name: string;
  assetsDir: string;
  /** The region work dir: log and pid file go here (so reapStaleRegions finds the pid), state under `<name>/`. */
  workDir: string;
  /** A kubeconfig with admin rights on the cluster (the apiserver's system:masters certificate). */
  kubeconfigPath: string;
  /** Default CONTROLLERS. */
  controllers?: readonly string[];
  extraArgs?: string[];
  /** Default 60 s. */
  startTimeoutMs?: number;
}

export interface ControllerManager {
  name: string;
  /** https://127.0.0.1:<port>, serving /healthz with a self-signed certificate. */
  url: string;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

function controllerManagerArgs(opts: StartControllerManagerOptions, certDir: string, port: number): string[] {
  return [
    `--kubeconfig=${opts.kubeconfigPath}`,
    // No --authentication-kubeconfig/--authorization-kubeconfig: nothing but the harness talks to
    // its port, /healthz is always allowed, and delegated authentication would keep looking for a
    // request-header CA these apiservers do not have.
    `--controllers=${(opts.controllers ?? CONTROLLERS).join(",")}`,
    "--leader-elect=false",
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    // A self-signed serving certificate is generated here; only the harness probes it.
    `--cert-dir=${certDir}`,
    ...(opts.extraArgs ?? []),
  ];
}

/** GET over TLS without verifying the self-signed serving certificate; resolves with the status. */
function getStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

export async function startControllerManager(
  opts: StartControllerManagerOptions,
): Promise<ControllerManager> {
  const certDir = join(opts.workDir, opts.name, "kube-controller-manager");
  await mkdir(certDir, { recursive: true });
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const proc = await startProcess({
    name: `kube-controller-manager-${opts.name}`,
    command: join(opts.assetsDir, "kube-controller-manager"),
    args: controllerManagerArgs(opts, certDir, port),
    dir: opts.workDir,
  });
  try {
    await waitFor(
      `kube-controller-manager ${opts.name}`,
      async () => (await getStatus(`${url}/healthz`)) === 200,
      { timeoutMs: opts.startTimeoutMs ?? 60_000, intervalMs: 200, exited: proc.exited },
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { name: opts.name, url, process: proc, stop: () => proc.stop() };
}
