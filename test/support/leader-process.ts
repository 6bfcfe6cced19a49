/**
 * A separate process that campaigns for a lease and prints what happens, one line per transition:
 * "LEADING <identity>" / "STOPPED <identity>", and "LEADER <holder>" each time an attempt finds a
 * new holder (so a follower's line proves it tried and saw the lease held). Args: kubeconfig
 * namespace lease identity.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "../../operators/runtime/kube.ts";
import { LeaderElector } from "../../operators/runtime/leaderelection.ts";
import { signalHandler } from "../../operators/runtime/manager.ts";

const [kubeconfig, namespace, name, identity] = process.argv.slice(2);
if (!kubeconfig || !namespace || !name || !identity)
  throw new Error("usage: kubeconfig namespace lease identity");
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const elector = new LeaderElector({ client: new KubeClient("service", kc), namespace, name, identity });
const signal = signalHandler();
await elector.run(signal, {
  onStartedLeading: () => process.stdout.write(`LEADING ${identity}\n`),
  onStoppedLeading: () => process.stdout.write(`STOPPED ${identity}\n`),
  onNewLeader: (holder) => process.stdout.write(`LEADER ${holder}\n`),
});
process.exit(0);
