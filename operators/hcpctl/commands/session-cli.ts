/** Commander wiring of `hcpctl session request|list|approve|deny|revoke|kubeconfig|token`. */
import { Option, type Command } from "commander";
import type { Io } from "../io.ts";
import { connectorOf } from "./maintenance-cli.ts";
import {
  runSessionApprove,
  runSessionDeny,
  runSessionKubeconfig,
  runSessionList,
  runSessionRequest,
  runSessionRevoke,
  type SessionDecisionFlags,
  type SessionKubeconfigFlags,
  type SessionListFlags,
  type SessionRequestFlags,
} from "./session.ts";
import { runSessionToken, type SessionTokenFlags } from "./session-token.ts";

export function addSession(program: Command, io: Io): void {
  const s = program
    .command("session")
    .description(
      "AccessSessions: time-limited access to a hosted cluster's API through the session gate, owned by you, approved by another",
    );
  s.command("request")
    .description(
      "ask for a session on an HcpCluster; you are its owner (the service cluster says who you are)",
    )
    .argument("<cluster>", "the HcpCluster")
    .addOption(new Option("-n, --namespace <namespace>", "the HcpCluster's namespace"))
    .option("--level <level>", "ReadOnly or Admin", "ReadOnly")
    .requiredOption("--reason <why>", "why (in every audit line of the session)")
    .option("--ttl <duration>", "how long it lasts once approved, 5m to 12h (policy may allow less)", "1h")
    .action(async (cluster: string, flags: SessionRequestFlags) => {
      await runSessionRequest(io, connectorOf(s), { cluster, flags });
    });
  s.command("list")
    .description("your sessions and those waiting for a decision; --all for every session")
    .option("--all", "every session", false)
    .action(async (flags: SessionListFlags) => {
      await runSessionList(io, connectorOf(s), { flags });
    });
  for (const [verb, run, what] of [
    ["approve", runSessionApprove, "approve another person's session"],
    ["deny", runSessionDeny, "deny another person's session"],
    ["revoke", runSessionRevoke, "end a session now, on every gate replica"],
  ] as const)
    s.command(verb)
      .description(what)
      .argument("<session>", "the AccessSession")
      .option("--reason <why>", "why (audit)")
      .action(async (name: string, flags: SessionDecisionFlags) => {
        await run(io, connectorOf(s), { name, flags });
      });
  s.command("kubeconfig")
    .description(
      "a kubeconfig for kubectl through the gate, signing in as the session's owner; print to stdout",
    )
    .argument("<session>", "the AccessSession")
    .requiredOption("--gate <url>", "the session gate's https URL")
    .option("--gate-ca <file>", "the gate's CA bundle, when private")
    .requiredOption("--issuer <url>", "the OpenID issuer people sign in with")
    .requiredOption("--client-id <id>", "hcpctl's client ID at the issuer")
    .option("--issuer-ca <file>", "the issuer's CA bundle, when private")
    .action(async (name: string, flags: SessionKubeconfigFlags) => {
      const program = [process.execPath, ...process.execArgv, process.argv[1] ?? "hcpctl"];
      await runSessionKubeconfig(io, connectorOf(s), { name, flags, program });
    });
  s.command("token")
    .description(
      "kubectl's exec credential plugin: your ID token (device sign-in, or HCPCTL_OIDC_USERNAME and HCPCTL_OIDC_PASSWORD)",
    )
    .requiredOption("--issuer <url>", "the OpenID issuer")
    .requiredOption("--client-id <id>", "hcpctl's client ID at the issuer")
    .option("--scope <scopes>", "scopes besides openid", "email groups profile")
    .action(async (flags: SessionTokenFlags) => {
      await runSessionToken(io, { flags });
    });
}
