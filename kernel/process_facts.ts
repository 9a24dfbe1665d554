/**
 * What the modal shows about a process the checks could not clear (issue 20),
 * from `/proc`, with its origin when pi can prove it (`provenance.ts`). Reads
 * are asynchronous and capped; anything unreadable is left empty, not guessed.
 *
 * @module
 */
import type { UncheckedProcess } from "../askpass/prompter.ts";
import { parseNulList } from "./proc.ts";
import { readProcFile } from "./proc_reader.ts";
import { readStat } from "./peer_verification.ts";
import { ticksNow } from "./provenance.ts";

/** Most of a command line kept (the modal truncates to its width anyway). */
const COMMAND_CAP = 4096;

/** Descriptions already read, by pid and start time (the gate asks every 100 ms). */
const described = new Map<number, { startTime: bigint; facts: UncheckedProcess }>();
const DESCRIBED_CAP = 64;

/**
 * `pid` with its command line, start time and parent, and `why` it is named.
 * Read once per process (pid and start time), then from memory.
 */
export async function describeProcess(
  pid: number,
  why: string,
  origin?: UncheckedProcess["origin"],
): Promise<UncheckedProcess> {
  const stat = await readStat(pid);
  const known = described.get(pid);
  if (
    stat && known && known.startTime === stat.startTime && known.facts.why === why &&
    known.facts.origin === origin
  ) {
    return known.facts;
  }
  const argv = parseNulList(
    await readProcFile(`/proc/${pid}/cmdline`, COMMAND_CAP) ?? new Uint8Array(),
  );
  const parentStat = stat && await readStat(stat.ppid);
  const facts: UncheckedProcess = {
    pid,
    command: argv && argv.length > 0 ? argv.join(" ") : stat ? `[${stat.comm}]` : "?",
    started: stat ? clockTimeOf(stat.startTime) : "",
    parent: stat ? `${stat.ppid}${parentStat ? ` (${parentStat.comm})` : ""}` : "",
    why,
    ...(origin ? { origin } : {}),
  };
  if (stat) {
    if (described.size >= DESCRIBED_CAP) described.delete(described.keys().next().value!);
    described.set(pid, { startTime: stat.startTime, facts });
  }
  return facts;
}

/** Local `HH:MM:SS` of a start time in ticks (1/100 s) since boot, by `/proc/uptime`'s clock. */
function clockTimeOf(ticks: bigint): string {
  const now = ticksNow();
  if (now === undefined) return "";
  const d = new Date(Date.now() - Number(now - ticks) * 10);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
