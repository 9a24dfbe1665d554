/**
 * Keys as both modals read them: pi's overlay (`extension/ui/masked_prompt.ts`) and the one on a
 * locked tmux client (`extension/keyboard/tmux_prompt.ts`).
 * @module
 */

/** Bracketed paste's markers: a paste arrives as one chunk wrapped in them. */
export const PASTE = { start: "\x1b[200~", end: "\x1b[201~" } as const;

/**
 * After a modal closed without the human, typing is dropped until Enter or an `idleMs` pause, at
 * most `maxMs`: the rest of a password must not land in pi's editor or tmux (ADR 0008).
 */
export const KEY_DROP = { idleMs: 1500, maxMs: 30_000 } as const;
