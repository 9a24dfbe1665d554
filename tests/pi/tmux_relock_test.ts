/**
 * ADR 0009's amendment "a lock asked while the last one ends", driven
 * directly: `promptOnTmuxClients` against a real tmux server, a real client
 * on a pty (`tests/helpers/tmux.ts`) and the real lock keeper. The order of
 * requests here (one that ends before it has even locked) cannot be timed
 * from a tool call of pi; `tmux_lock_test.ts` runs the common case through
 * real pi.
 *
 * The old keeper is stopped, so that tmux keeps the client in the old lock
 * and ignores the next `lock-session`; a hook after `set-option` counts pi's
 * lock runs (each sets and unsets the session's `lock-command`).
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { TmuxSession } from "../helpers/tmux.ts";
import { waitFor } from "../helpers/processes.ts";
import { childrenOf, sendSignal } from "./attack_scripts/pi_checks.ts";
import { promptOnTmuxClients } from "../../extension/keyboard/tmux_prompt.ts";

/** One request on the clients: `drawn` once its modal's first frame is drawn. */
function ask(place: { socket: string; pane: string }, name: string) {
  const abort = new AbortController();
  let drawn = false;
  const prompt = promptOnTmuxClients(place, {
    make: () => ({
      render: () => {
        drawn = true;
        return [name];
      },
      handleInput: () => {},
      dispose: () => {},
    }),
    signal: abort.signal,
    recheck: () => Promise.resolve(true),
  });
  const end = async () => {
    abort.abort("test");
    await prompt.outcome;
  };
  return { drawn: () => drawn || undefined, end };
}

describe("a lock asked while the last one ends (real tmux, a real client, the real keeper)", () => {
  it("a request that ends before it locks forgets no client: the next one's modal still comes once the old lock ends late", async () => {
    const t = await TmuxSession.start({ argv: ["sleep", "600"], cols: 100, rows: 30 });
    let keeper: number | undefined;
    try {
      const place = { socket: t.socket, pane: t.target };
      const locks = join(t.dir, "locks");
      const lockLines = async () =>
        (await readFile(locks, "utf8").catch(() => "")).split("\n").length - 1;
      await t.tmux("set-hook", "-g", "after-set-option", `run-shell "echo >> '${locks}'"`);
      const a = ask(place, "modal-a");
      await waitFor("the first modal", a.drawn, 30_000);
      const client = Number((await t.tmux("list-clients", "-F", "#{client_pid}")).stdout);
      // The keeper is the client's only child (the lock command `exec`s it).
      keeper = await waitFor(
        "the first lock's keeper",
        async () => (await childrenOf(client))[0],
        10_000,
      );
      sendSignal(keeper, "SIGSTOP");
      await a.end();
      // Ends before its lock: it reached no client, and must not make pi forget the first one's.
      await ask(place, "modal-b").end();
      const before = await lockLines();
      const c = ask(place, "modal-c");
      try {
        await waitFor("the third request's lock", async () => {
          return await lockLines() >= before + 2 ? true : undefined;
        }, 30_000);
        keeper !== undefined && sendSignal(keeper, "SIGCONT");
        await waitFor("the third modal", c.drawn, 15_000).catch(async (e) => {
          throw new Error(`${e.message}; the client shows:\n${await t.capture()}`);
        });
        assert.match(await t.capture(), /modal-c/);
      } finally {
        await c.end();
      }
    } finally {
      keeper !== undefined && sendSignal(keeper, "SIGCONT");
      await t.kill();
    }
  });
});
