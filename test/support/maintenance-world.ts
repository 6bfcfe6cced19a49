/**
 * A MaintenanceRun actuator without an apiserver: clusters and runs in FakeListers, a writer that
 * records status writes (and can hold or fail them), a test task whose steps answer as scripted,
 * and a clock. `sync` copies what was written into the cache, as the watch would.
 */
import {
  MAINTENANCE_RUN_FINALIZER,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceSpec,
  type MaintenanceTask,
  type MaintenanceTaskSpec,
} from "../../operators/api/v1alpha1/index.ts";
import { Admissions } from "../../operators/maintenance/admission.ts";
import { MaintenanceRunReconciler } from "../../operators/maintenance/run-reconcile.ts";
import { RUN_INDEXERS, desiredRun } from "../../operators/maintenance/runs.ts";
import type { MaintenanceStep, StepOutcome, TaskRegistry } from "../../operators/maintenance/step.ts";
import type { Result } from "../../operators/runtime/controller.ts";
import type { KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { RecordingEvents, RecordingWriter, testContext } from "./fakes.ts";
import { FakeLister } from "./lister.ts";

/** A writer whose status writes can be held until released, or fail. */
export class GatedWriter extends RecordingWriter {
  gate: Promise<void> | undefined;
  failNext = false;
  #held = 0;
  #heldWaiters: Array<{ count: number; resolve: () => void }> = [];

  /** Resolves once `count` status writes are held at the gate. */
  held(count: number): Promise<void> {
    if (this.#held >= count) return Promise.resolve();
    return new Promise((resolve) => this.#heldWaiters.push({ count, resolve }));
  }

  override async applyStatus<T extends KubeObject>(
    type: ResourceType,
    current: KubeObject,
    status: unknown,
  ): Promise<T | undefined> {
    if (this.gate) {
      const gate = this.gate;
      this.#held++;
      for (const w of this.#heldWaiters.filter((x) => x.count <= this.#held)) w.resolve();
      await gate;
    }
    if (this.failNext) {
      this.failNext = false;
      throw new Error("apiserver unavailable");
    }
    return super.applyStatus<T>(type, current, status);
  }
}

export const STEPS = ["First", "Second"] as const;

export class MaintenanceWorld {
  now = new Date("2026-06-03T10:00:00Z"); // a Wednesday
  readonly clusters = new FakeLister<HcpCluster>();
  readonly runs = new FakeLister<MaintenanceRun>([], RUN_INDEXERS);
  /** The runs' tasks, as run() made them: pause or cancel one with setTask. */
  readonly tasks = new FakeLister<MaintenanceTask>();
  readonly writer = new GatedWriter();
  readonly events = new RecordingEvents();
  /** Outcomes per step, taken in order; a step with none left is done. An Error is thrown. */
  readonly script: Record<string, Array<StepOutcome | Error>> = {};
  readonly executed: string[] = [];
  readonly registry: TaskRegistry;
  reconciler: MaintenanceRunReconciler;
  #synced = 0;
  #uid = 0;

  /** `registry`: real task definitions instead of the scripted task. */
  constructor(registry?: TaskRegistry) {
    const step = (name: string): MaintenanceStep => ({
      name,
      execute: () => {
        this.executed.push(name);
        const next = this.script[name]?.shift();
        if (next instanceof Error) return Promise.reject(next);
        return Promise.resolve(next ?? { kind: "done", message: `${name} did its work` });
      },
    });
    this.registry = registry ?? new Map([["RotateServiceAccountSigningKey", { steps: STEPS.map(step) }]]);
    this.reconciler = this.restart();
  }

  /** A new actuator (an operators restart): nothing remembered in memory. */
  restart(): MaintenanceRunReconciler {
    this.reconciler = new MaintenanceRunReconciler({
      runs: this.runs,
      clusters: this.clusters,
      maintenanceTasks: this.tasks,
      tasks: this.registry,
      admissions: new Admissions(this.runs),
      writer: this.writer,
      events: this.events,
      clock: () => this.now,
      maxAttempts: 3,
    });
    return this.reconciler;
  }

  cluster(
    name: string,
    opts: { managementCluster?: string; maintenance?: MaintenanceSpec } = {},
  ): HcpCluster {
    const cluster = {
      metadata: { name, namespace: "ns", uid: `cluster-${name}` },
      spec: { ...(opts.maintenance ? { maintenance: opts.maintenance } : {}) },
      status: { managementCluster: opts.managementCluster ?? "mc-1" },
    } as unknown as HcpCluster;
    this.clusters.set(cluster);
    return cluster;
  }

  run(task: string, cluster: HcpCluster, spec: Partial<MaintenanceTaskSpec> = {}): MaintenanceRun {
    const owner: MaintenanceTask = {
      metadata: { name: task, uid: `task-${task}` },
      spec: { task: "RotateServiceAccountSigningKey", clusters: { names: [] }, ...spec },
    };
    if (!this.tasks.get("", task)) this.tasks.set(owner);
    const run = desiredRun(owner, cluster);
    run.metadata = {
      ...run.metadata,
      uid: `run-${this.#uid++}`,
      generation: 1,
      finalizers: [MAINTENANCE_RUN_FINALIZER],
    };
    this.runs.set(run);
    return run;
  }

  /** Changes a task's mutable fields, as kubectl patch would. */
  setTask(name: string, change: Pick<MaintenanceTaskSpec, "paused" | "cancelled">): void {
    const task = this.tasks.get("", name);
    if (!task) throw new Error(`no task ${name} in this world`);
    this.tasks.set({ ...task, spec: { ...task.spec, ...change } });
  }

  reconcile(run: MaintenanceRun): Promise<Result> {
    return this.reconciler.reconcile(testContext(), {
      cluster: "service",
      namespace: run.metadata.namespace ?? "",
      name: run.metadata.name ?? "",
    });
  }

  /** Reconciles, then lets the cache see what it wrote. */
  async step(run: MaintenanceRun): Promise<Result> {
    const result = await this.reconcile(run);
    this.sync();
    return result;
  }

  /** The watch catches up: every status written so far shows in the cache. */
  sync(): void {
    for (const w of this.writer.writes.slice(this.#synced)) {
      if (w.verb !== "status") continue;
      const cached = this.runs.get(w.namespace ?? "", w.name);
      if (cached) this.runs.set({ ...cached, status: w.body as MaintenanceRun["status"] });
    }
    this.#synced = this.writer.writes.length;
  }

  current(run: MaintenanceRun): MaintenanceRun {
    return this.runs.get(run.metadata.namespace ?? "", run.metadata.name ?? "")!;
  }

  phase(run: MaintenanceRun): string | undefined {
    return this.current(run).status?.phase;
  }

  condition(
    run: MaintenanceRun,
    type: string,
  ): { status: string; reason: string; message: string } | undefined {
    return this.current(run).status?.conditions?.find((c) => c.type === type);
  }
}
