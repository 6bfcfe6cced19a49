/**
 * The faults of the chaos table, one at a time. Each `run` injects its fault, calls
 * `ctx.injected()` once it is in place (the run's during-fault writes start then), holds it for
 * the fault's own duration (a parameter of the fault, not a wait for anything), removes it and
 * returns. Waits for something to happen (a process to die at a failpoint, a new leader, a relist)
 * are evidence-based with deadlines, and what they saw goes into `ctx.note`.
 */
import { mkdtemp, readdir, readFile, rename } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FAILPOINTS, type Failpoint } from "../../operators/runtime/failpoints.ts";
import { leaseType } from "../../operators/runtime/leaderelection.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { issueBrokerCredentials } from "../harness/broker.ts";
import { compactEtcd } from "../harness/etcd.ts";
import { EVENT_GRID_QUEUE } from "./mqtt-proxy.ts";
import { OPERATORS_NAMESPACE, type ChaosRegion, type Slot } from "./region.ts";
import type { RestoreContext } from "./restore-invariants.ts";
import { killAt, lasting, seconds, seen } from "./fault-tools.ts";
import { meteringFaults } from "./metering-faults.ts";
import { operatorsKillMidRollout } from "./rollout-fault.ts";
import { serviceClusterLoss } from "./service-loss-fault.ts";
import type { Workload } from "./workload.ts";

export interface FaultSettings {
  /** Clusters (each with a pool) per run. */
  n: number;
  /** How long a management cluster's apiserver stays away (npm run chaos: 10 minutes by default). */
  managementOutageMs: number;
  /** Only these failpoints, for the failpoint faults (a CI subset); all of them when unset. */
  failpoints?: readonly Failpoint[];
}

export interface FaultContext {
  chaos: ChaosRegion;
  workload: Workload;
  settings: FaultSettings;
  /** The fault is in place: the during-fault writes start now. */
  injected(): void;
  /** A fact for the report (what was hit, counted, seen). */
  note(text: string): void;
  /** A fact read once the run has converged (or given up), for what happens after the fault. */
  noteAfterwards(text: () => string): void;
  /** The region was restored from a backup: judged with what a restore must keep, timed from its start. */
  restored(restore: Restored): void;
  progress(text: string): void;
}

export interface Restored {
  /** When the restore began (ms since the epoch): time to converge counts from here. */
  startedAt: number;
  context: RestoreContext;
  /** What the workload asked for after the backup was taken (workload.ts rebase). */
  lostBeyondRpo: string[];
}

export interface Fault {
  name: string;
  /** One line for docs/reliability.md and --help. */
  what: string;
  /** Operators replicas the fault needs (leader election with more than one). Default 1. */
  replicas?: number;
  run(ctx: FaultContext): Promise<void>;
}

// ---- processes --------------------------------------------------------------------------------

const brokerKill: Fault = {
  name: "broker-kill",
  what: "mosquitto killed with SIGKILL, down 3 s, started again (every session and in-flight message lost)",
  async run(ctx) {
    await ctx.chaos.region.broker!.restart({
      kill: true,
      whileDown: async () => {
        ctx.injected();
        await lasting(3_000);
      },
    });
  },
};

const DELETE_SIDE: readonly Failpoint[] = [
  "cluster/after-works-deleted",
  "cluster/after-azure-resource-deleted",
  "cluster/before-finalizer-removed",
  "maestro-server/after-delete-published",
  "maestro-agent/before-deleted-confirmed",
];

/** New work that passes the failpoint: a deletion for the delete side, else a new cluster. */
function triggerFor(ctx: FaultContext, failpoint: Failpoint): () => Promise<unknown> {
  return DELETE_SIDE.includes(failpoint) ? () => ctx.workload.deleteOne() : () => ctx.workload.createOne();
}

function failpointsOf(ctx: FaultContext, prefixes: string[]): Failpoint[] {
  const chosen = ctx.settings.failpoints ?? FAILPOINTS;
  return chosen.filter((f) => prefixes.some((p) => f.startsWith(p)));
}

const agentCrash: Fault = {
  name: "agent-crash",
  what: "every maestro-agent killed mid-apply (some manifests applied) and before confirming a deletion, each time restarted with an empty store",
  async run(ctx) {
    for (const fp of failpointsOf(ctx, ["maestro-agent/"]))
      await killAt(ctx, ctx.chaos.agents, fp, triggerFor(ctx, fp));
    await Promise.all(ctx.chaos.agents.map((a) => a.restart()));
  },
};

const operatorsFailpoints: Fault = {
  name: "operators-failpoints",
  what: "the operators process killed at every failpoint between an Azure, work or broker write and the status that records it, restarted after each",
  async run(ctx) {
    const slots = ctx.chaos.operators;
    for (const fp of failpointsOf(ctx, ["cluster/", "azure/", "nodepool/", "maestro-server/"]))
      await killAt(ctx, slots, fp, triggerFor(ctx, fp));
    await Promise.all(slots.map((s) => s.restart()));
  },
};

const leaderKill: Fault = {
  name: "leader-kill",
  what: "two operators replicas with leader election; the leader killed with SIGKILL and started again",
  replicas: 2,
  async run(ctx) {
    const { service, operators } = ctx.chaos;
    const holder = async (): Promise<string> =>
      (
        await service.find<KubeObject & { spec?: { holderIdentity?: string } }>(
          leaseType,
          "hcp-operators",
          OPERATORS_NAMESPACE,
        )
      )?.spec?.holderIdentity ?? "";
    const identity = (s: Slot): string => `${hostname()}-${s.pid}`;
    const before = await holder();
    const leader = operators.find((s) => identity(s) === before);
    if (!leader) throw new Error(`no operators replica holds the lease (holder "${before}")`);
    const follower = operators.find((s) => s !== leader)!;
    ctx.injected();
    const started = Date.now();
    await leader.restart();
    const taken = await seen(
      async () => (await holder().catch(() => before)) === identity(follower),
      120_000,
    );
    ctx.note(
      taken
        ? `the follower led after ${seconds(Date.now() - started)}`
        : "the follower did not take the lease in 120 s",
    );
  },
};

const agentClockAhead: Fault = {
  name: "agent-clock-ahead",
  what: "one maestro-agent restarted with its clock an hour ahead, and left so for the rest of the run",
  async run(ctx) {
    const skew = pathToFileURL(join(import.meta.dirname, "clock-skew.ts")).href;
    await ctx.chaos.agents[0]!.restart({
      env: { HCP_CLOCK_OFFSET_MS: String(3_600_000) },
      nodeArgs: ["--import", skew],
    });
    ctx.injected();
  },
};

// ---- the control plane's storage and apiservers ------------------------------------------------

const apiserverRestart: Fault = {
  name: "apiserver-restart",
  what: "each kube-apiserver (service cluster, then every management cluster) stopped and started again, one after another",
  async run(ctx) {
    for (const c of ctx.chaos.region.clusters) {
      const started = Date.now();
      await c.apiServer!.restart();
      ctx.injected();
      ctx.note(`${c.name} back after ${seconds(Date.now() - started)}`);
    }
  },
};

/** Lines in the components' logs that say an informer relisted after a 410. */
async function relists(logDir: string): Promise<number> {
  let count = 0;
  for (const file of (await readdir(logDir)).filter((f) => f.endsWith(".log"))) {
    const text = await readFile(join(logDir, file), "utf8");
    count += text.split("Relisting after resource version expired").length - 1;
  }
  return count;
}

const etcdCompaction: Fault = {
  name: "etcd-compaction",
  what: "etcd compacted at its head revision, then every apiserver restarted so each watch resumes from a compacted revision (410 Gone)",
  async run(ctx) {
    const { region, logDir } = ctx.chaos;
    const before = await relists(logDir);
    const revision = await compactEtcd(region.etcdUrl);
    ctx.injected();
    await Promise.all(region.clusters.map((c) => c.apiServer!.restart()));
    const saw = await seen(async () => (await relists(logDir)) > before, 120_000);
    ctx.note(
      `compacted at revision ${revision}; ${(await relists(logDir)) - before} informer relists after 410${saw ? "" : " (none seen in 120 s)"}`,
    );
  },
};

const etcdPause: Fault = {
  name: "etcd-pause",
  what: "etcd stopped (SIGSTOP) for 5 s, then continued",
  async run(ctx) {
    const pid = ctx.chaos.region.etcd!.process.pid;
    process.kill(pid, "SIGSTOP");
    try {
      ctx.injected();
      await lasting(5_000);
    } finally {
      process.kill(pid, "SIGCONT");
    }
  },
};

function managementOutage(): Fault {
  return {
    name: "management-apiserver-outage",
    what: "one management cluster's kube-apiserver gone for 10 min (--management-outage-s shortens it) and back",
    async run(ctx) {
      const mgmt = ctx.chaos.region.clusters.find((c) => c.role === "management")!;
      await mgmt.apiServer!.restart({
        whileDown: async () => {
          ctx.injected();
          await lasting(ctx.settings.managementOutageMs);
        },
      });
      ctx.note(`${mgmt.name} away for ${seconds(ctx.settings.managementOutageMs)}`);
    },
  };
}

// ---- Azure -----------------------------------------------------------------------------------

/** Every ARM call of the operators (not the token endpoint, which is Entra ID's, not ARM's). */
const ARM_CALLS = { path: "/subscriptions/" };
const FOREVER = 1e9;

function armStorm(
  name: string,
  what: string,
  inject: (ctx: FaultContext) => { hits: number; clear(): void },
): Fault {
  return {
    name,
    what,
    async run(ctx) {
      const handle = inject(ctx);
      ctx.injected();
      await lasting(60_000);
      handle.clear();
      ctx.note(`${handle.hits} ARM calls answered by the fault in 60 s`);
    },
  };
}

const armThrottleRetryAfter = armStorm(
  "arm-429-retry-after",
  "every ARM call answered 429 with Retry-After: 2 for 60 s",
  (ctx) => ctx.chaos.arm.faults.throttle(ARM_CALLS, { times: FOREVER, retryAfterSeconds: 2 }),
);

const armThrottle = armStorm("arm-429", "every ARM call answered 429 without Retry-After for 60 s", (ctx) =>
  ctx.chaos.arm.faults.throttle(ARM_CALLS, { times: FOREVER }),
);

const arm5xx = armStorm(
  "arm-5xx",
  "every ARM call answered 500 (first 30 s) or 503 (last 30 s) for 60 s",
  (ctx) => {
    const faults = ctx.chaos.arm.faults;
    const first = faults.serverError(ARM_CALLS, { times: FOREVER, status: 500 });
    let second: { hits: number; clear(): void } | undefined;
    const switchOver = setTimeout(() => {
      first.clear();
      second = faults.serverError(ARM_CALLS, { times: FOREVER, status: 503 });
    }, 30_000);
    return {
      get hits() {
        return first.hits + (second?.hits ?? 0);
      },
      clear() {
        clearTimeout(switchOver);
        first.clear();
        second?.clear();
      },
    };
  },
);

const armHungLro: Fault = {
  name: "arm-hung-lro",
  what: "every ARM long-running PUT and DELETE held InProgress for 90 s, then let go",
  async run(ctx) {
    const hold = ctx.chaos.arm.faults.hangOperation({ method: ["PUT", "DELETE"], ...ARM_CALLS });
    ctx.injected();
    await lasting(90_000);
    const held = hold.held;
    hold.release();
    ctx.note(`${hold.hits} operations hung, ${held} still held when released`);
  },
};

// ---- the broker and the network ------------------------------------------------------------------

/** How long broker-unreachable cuts the management clusters off. */
export const BROKER_CUT_MS = 60_000;

const brokerUnreachable: Fault = {
  name: "broker-unreachable",
  what: `every management cluster cut off from the broker for ${BROKER_CUT_MS / 1000} s while N more clusters are created; their sessions kept with Event Grid's offline queue (${EVENT_GRID_QUEUE.messages} messages or ${EVENT_GRID_QUEUE.bytes / 1_000_000} MB, then the session and its queue are dropped)`,
  async run(ctx) {
    const { proxy, management } = ctx.chaos;
    proxy.cut(management.map((m) => m.cluster));
    ctx.injected();
    // New clusters while they are away: their works are what fills the offline queues.
    const extra = Array.from({ length: ctx.settings.n }, () => ctx.workload.createOne());
    await Promise.all([lasting(BROKER_CUT_MS), ...extra]);
    proxy.heal();
    const s = proxy.stats;
    ctx.noteAfterwards(
      () =>
        `queued messages delivered on reconnect: ${s.queueDelivered}; dropped with an overflowing session: ${s.queueDiscarded} (${s.sessionsTerminated} sessions); ${s.refused} connections refused while cut off`,
    );
  },
};

const deliveryChaos: Fault = {
  name: "broker-reorder-duplicate",
  what: "for 120 s every MQTT message delayed by a random 0–3 s (so out of order) and half of them delivered again up to 30 s later, both directions",
  async run(ctx) {
    const { proxy } = ctx.chaos;
    proxy.setDeliveryChaos({ duplicateRatio: 0.5, maxDelayMs: 3_000, maxDuplicateDelayMs: 30_000 });
    ctx.injected();
    await lasting(120_000);
    proxy.setDeliveryChaos(undefined);
    ctx.note(`${proxy.stats.delayed} messages delayed, ${proxy.stats.duplicated} duplicated`);
  },
};

/** Replaces the identity's client certificate files with a new pair and revokes the old one at the broker. */
async function rotate(ctx: FaultContext, identity: string): Promise<void> {
  const broker = ctx.chaos.region.broker!;
  const current = await broker.credentials(identity);
  const old = await readFile(current.certPath, "utf8");
  const fresh = await issueBrokerCredentials(broker, await mkdtemp(join(broker.dir, "rotated-")), identity);
  await rename(fresh.keyPath, current.keyPath);
  await rename(fresh.certPath, current.certPath);
  ctx.chaos.proxy.revoke(old);
}

const certRotation: Fault = {
  name: "cert-rotation",
  what: "the client certificates of maestro-server and one maestro-agent replaced on disk while connected and the old ones revoked; 10 s later their connections drop",
  async run(ctx) {
    const { proxy, management } = ctx.chaos;
    const agentIdentity = management[0]!.cluster;
    await rotate(ctx, "maestro");
    await rotate(ctx, agentIdentity);
    ctx.injected();
    await lasting(10_000);
    for (const identity of ["maestro", agentIdentity]) {
      const before = proxy.connectionsOf(identity);
      const started = Date.now();
      proxy.drop(identity);
      const back = await seen(() => proxy.connectionsOf(identity) > before, 120_000);
      ctx.note(
        `${identity} ${back ? `reconnected with its new certificate after ${seconds(Date.now() - started)}` : "did not reconnect in 120 s"}`,
      );
    }
    ctx.note(`${proxy.stats.refused} connections refused (revoked certificates among them)`);
  },
};

/** Every fault, in the order the table shows them. */
export function allFaults(): Fault[] {
  return [
    brokerKill,
    agentCrash,
    operatorsFailpoints,
    apiserverRestart,
    etcdCompaction,
    etcdPause,
    armThrottleRetryAfter,
    armThrottle,
    arm5xx,
    armHungLro,
    leaderKill,
    brokerUnreachable,
    deliveryChaos,
    agentClockAhead,
    certRotation,
    managementOutage(),
    operatorsKillMidRollout,
    serviceClusterLoss,
    ...meteringFaults,
  ];
}
