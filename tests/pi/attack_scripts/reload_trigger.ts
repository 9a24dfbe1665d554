/**
 * Test-only pi extension for `tests/pi/faults_test.ts`: the command
 * `/test-reload-when <path>` arms pi's own reload flow — `ctx.reload()`, the
 * same `handleReloadCommand` that a typed `/reload` runs — to fire as soon
 * as the file `<path>` exists. Just before firing it writes the time
 * (`Date.now()`) to `<path>.fired`.
 *
 * It exists because `/reload` cannot be typed while the sudo modal holds
 * the keyboard (the keys go into the masked field): the test arms it while
 * the editor has focus, opens the modal, then creates the file.
 *
 * @module
 */
import { access, rename, writeFile } from "node:fs/promises";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const POLL_MS = 20;
const DEADLINE_MS = 60_000;

/** Extension factory: registers `/test-reload-when`. */
export default function reloadTrigger(pi: ExtensionAPI): void {
  pi.registerCommand("test-reload-when", {
    description: "Test only: run the /reload flow once the file <path> exists",
    handler: (args, ctx) => {
      const path = args.trim();
      const end = Date.now() + DEADLINE_MS;
      const poll = async () => {
        if (Date.now() > end) return;
        const exists = await access(path).then(() => true, () => false);
        if (!exists) return void setTimeout(poll, POLL_MS);
        // Written whole, then renamed: a reader never sees an empty file.
        await writeFile(`${path}.fired.tmp`, String(Date.now()));
        await rename(`${path}.fired.tmp`, `${path}.fired`);
        await ctx.reload().catch((e: unknown) => ctx.ui.notify(`test-reload-when: ${e}`, "error"));
      };
      void poll();
      return Promise.resolve();
    },
  });
}
