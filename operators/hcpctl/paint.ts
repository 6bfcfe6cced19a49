/**
 * Colour through Node's util.styleText: with a stream it colours only when that stream is a
 * terminal that takes colour and neither NO_COLOR nor NODE_DISABLE_COLORS is set (FORCE_COLOR
 * forces it), so piped output is plain without a flag.
 */
import { styleText } from "node:util";
import type { Severity } from "./model.ts";

export type Style = Parameters<typeof styleText>[0];
export type Painter = (style: Style, text: string) => string;

export const plain: Painter = (_style, text) => text;

/** Paints for `stream`, deciding once per call from the stream and the environment. */
export function painterFor(stream: NodeJS.WritableStream): Painter {
  return (style, text) => styleText(style, text, { stream, validateStream: true });
}

/** Always colours (for tests of the coloured form). */
export const always: Painter = (style, text) => styleText(style, text, { validateStream: false });

/**
 * The colour of a state: Error red, Warning yellow, Info cyan, healthy green (True, or False of a
 * condition whose polarity is negative, which has no severity).
 */
export function stateStyle(ready: string, severity: Severity): Style | undefined {
  if (severity === "Error") return "red";
  if (severity === "Warning") return "yellow";
  if (severity === "Info") return "cyan";
  if (ready === "True" || ready === "False") return "green";
  return undefined;
}
