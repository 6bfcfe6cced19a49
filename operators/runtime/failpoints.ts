/**
 * Crash points for crash-recovery tests, in the spirit of etcd's gofail: a process started with
 * HCP_FAILPOINTS="cluster/after-dns-zone" kills itself with SIGKILL when it reaches that point, so
 * a test can prove that a restart converges from exactly there. Unset in production: one lookup.
 */
const armed = new Set((process.env["HCP_FAILPOINTS"] ?? "").split(",").filter(Boolean));

export function failpoint(name: string): void {
  if (armed.has(name)) process.kill(process.pid, "SIGKILL");
}
