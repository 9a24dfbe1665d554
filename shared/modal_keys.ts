/**
 * Keys as both modals read them, written once: pi's own overlay
 * (`extension/ui/masked_prompt.ts`) and the modal on a locked tmux client's
 * terminal (`extension/keyboard/tmux_prompt.ts`) drop the rest of a password
 * alike.
 *
 * @module
 */

/** Bracketed paste's markers: a paste arrives as one chunk wrapped in them. */
export const PASTE = { start: "\x1b[200~", end: "\x1b[201~" } as const;

/**
 * After a modal closed without the human (withdrawn, timed out), the text
 * they were typing into it is dropped until they stop typing for `idleMs` or
 * press Enter, and at most for `maxMs`, however fast the keys keep coming:
 * the rest of a password must not land in pi's editor (or reach tmux), in
 * clear, one Enter away from the model.
 */
export const KEY_DROP = { idleMs: 1500, maxMs: 30_000 } as const;
