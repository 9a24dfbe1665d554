/**
 * A process described for the human, from `/proc`: what the modal shows about
 * a process the checks could not clear (issue 20) — its pid, command line,
 * start time and parent, and where it came from when pi can prove it
 * (`provenance.ts`). Every read is asynchronous and capped; anything
 * unreadable is left empty rather than guessed.
 *
 * @module
 */
import type { UncheckedProcess } from "../askpass/prompter.ts";
import { parseNulList, parseStat } from "./proc.ts";
import { readProcFile, readProcText } from "./proc_reader.ts";

/** Clock ticks per second of `stat`'s start time (`USER_HZ`: 100 on Linux's ABI). */
const USER_HZ = 100;
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
  const stat = parseStat(await readProcText(`/proc/${pid}/stat`) ?? "");
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
  const parentStat = stat && parseStat(await readProcText(`/proc/${stat.ppid}/stat`) ?? "");
  const facts: UncheckedProcess = {
    pid,
    command: argv && argv.length > 0 ? argv.join(" ") : stat ? `[${stat.comm}]` : "?",
    started: stat ? await clockTimeOf(stat.startTime) : "",
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

/** The boot time (`btime` of `/proc/stat`), read once. */
let bootSeconds: Promise<number | undefined> | undefined;

/** Local `HH:MM:SS` of a start time in ticks since boot. */
async function clockTimeOf(ticks: bigint): Promise<string> {
  bootSeconds ??= readProcText("/proc/stat", 256 * 1024).then((text) => {
    const m = /^btime (\d+)$/m.exec(text ?? "");
    return m ? Number(m[1]) : undefined;
  });
  const boot = await bootSeconds;
  if (boot === undefined) return "";
  const d = new Date(boot * 1000 + Number(ticks) * (1000 / USER_HZ));
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
