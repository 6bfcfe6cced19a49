/** Where a command writes and what it reads of its process: injected, so tests run commands in-process. */
import type { Connection } from "./kube.ts";
import type { Painter } from "./paint.ts";

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  /** Colours for stdout: plain unless it is a terminal that takes colour and NO_COLOR is unset. */
  paint: Painter;
  now(): number;
  /** Aborted on Ctrl-C: watches end and the command returns. */
  signal: AbortSignal;
}

/** Opens the connection only once the arguments are known to be good. */
export type Connect = () => Connection;
