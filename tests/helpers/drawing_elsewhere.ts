/**
 * An {@link Elsewhere} for the modals' unit tests: it builds the modal once, keeps what it drew
 * at 80 columns, and cancels, so a test can check which look was drawn on the other terminal.
 */
import type { Elsewhere } from "../../extension/ui/elsewhere.ts";

/** The `elsewhere` to pass, and what its modal drew. */
export function drawingElsewhere(): { elsewhere: Elsewhere; drawn: () => string[] } {
  let drawn: string[] = [];
  const elsewhere: Elsewhere = (make) => {
    const modal = make(() => {}, () => {});
    drawn = modal.render(80);
    modal.dispose();
    return { outcome: Promise.resolve({ kind: "cancel" }), again: () => {} };
  };
  return { elsewhere, drawn: () => drawn };
}
