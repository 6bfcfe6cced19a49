/** hcpctl run in the test's own process, its output captured: exit code, stdout, stderr. */
import { Writable } from "node:stream";
import { run } from "../../operators/hcpctl/cli.ts";
import { plain } from "../../operators/hcpctl/paint.ts";

/** A stream that keeps what is written to it in `text`. */
export function textSink(): Writable & { text: string } {
  const w = new Writable({
    write(chunk: Buffer, _enc, done) {
      w.text += chunk.toString();
      done();
    },
  }) as Writable & { text: string };
  w.text = "";
  return w;
}

export async function runHcpctl(
  ...argv: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = textSink();
  const stderr = textSink();
  const code = await run(argv, {
    stdout,
    stderr,
    paint: plain,
    now: Date.now,
    signal: new AbortController().signal,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}
