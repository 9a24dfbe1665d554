/**
 * A process described for the human, from `/proc`: what the modal shows about
 * a process the checks could not clear (issue 20) — its pid, command line,
 * start time and parent. Every read is asynchronous and capped; anything
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

/** `pid` with its command line, start time and parent, and `why` it is named. */
export async function describeProcess(pid: number, why: string): Promise<UncheckedProcess> {
  const stat = parseStat(await readProcText(`/proc/${pid}/stat`) ?? "");
  const argv = parseNulList(
    await readProcFile(`/proc/${pid}/cmdline`, COMMAND_CAP) ?? new Uint8Array(),
  );
  const command = argv && argv.length > 0 ? argv.join(" ") : stat ? `[${stat.comm}]` : "?";
  const parentStat = stat
    ? parseStat(await readProcText(`/proc/${stat.ppid}/stat`) ?? "")
    : undefined;
  return {
    pid,
    command,
    started: stat ? await clockTimeOf(stat.startTime) : "",
    parent: stat ? `${stat.ppid}${parentStat ? ` (${parentStat.comm})` : ""}` : "",
    why,
  };
}

/** Local `HH:MM:SS` of a start time in ticks since boot (`btime` of `/proc/stat`). */
async function clockTimeOf(ticks: bigint): Promise<string> {
  const btime = /^btime (\d+)$/m.exec(await readProcText("/proc/stat", 256 * 1024) ?? "");
  if (!btime) return "";
  const ms = Number(btime[1]) * 1000 + Number(ticks) * (1000 / USER_HZ);
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
