/**
 * Every tool call and result pi draws, made inert, so agent-chosen text cannot draw a look-alike
 * of the password modal (`docs/security-tests.md` X11–X12, `docs/security-tests-2.md` F9). For
 * every tool, through pi's tool-renderer resolver: the arguments and result a renderer sees are
 * cleaned (`sanitizeMultiline`; what runs and what the model reads are unchanged), and the lines
 * it draws keep only styling (`keepStylingOnly`), covering text it reads itself (the file an
 * `edit` preview diffs against). The assistant's Markdown: {@link cleanMarkdown}.
 *
 * @module
 */
import { type Component, Text } from "@earendil-works/pi-tui";
import { keepStylingOnly, sanitizeMultiline } from "../../askpass/prompt_text.ts";

/** The renderer slots of a tool, as pi's resolver passes them (`ToolRenderers`). */
export interface ToolRendererSlots {
  readonly renderShell?: "default" | "self";
  // Renderer signatures are pi's own generics; the wrapper only forwards them.
  // deno-lint-ignore no-explicit-any
  readonly renderCall?: (args: any, theme: any, context: any) => Component;
  // deno-lint-ignore no-explicit-any
  readonly renderResult?: (result: any, options: any, theme: any, context: any) => Component;
}

/** How deep cleaning walks nested arguments (objects in arrays in objects…). */
const MAX_DEPTH = 8;

/** A copy of tool arguments (or a result) with every string cleaned for display. */
export function cleanArgs(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return sanitizeMultiline(value);
  if (depth >= MAX_DEPTH || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => cleanArgs(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[sanitizeMultiline(k)] = cleanArgs(v, depth + 1);
  return out;
}

/** Markdown of the assistant's message or thinking, without escape sequences or controls. */
export function cleanMarkdown(markdown: string): string {
  return sanitizeMultiline(markdown);
}

/**
 * A component whose lines keep styling only, around the renderer's own: pi hands that back as
 * `lastComponent` for the renderer to reuse, and it must get its own object, not this one.
 */
class InertLines implements Component {
  readonly inner: Component;
  #source: readonly string[] | undefined;
  #lines: readonly string[] = [];

  constructor(inner: Component) {
    this.inner = inner;
  }

  render(width: number): readonly string[] {
    const source = this.inner.render(width);
    // Renderers may return a cached array: clean it again only when it changed.
    if (source !== this.#source) {
      this.#source = source;
      this.#lines = source.map(keepStylingOnly);
    }
    return this.#lines;
  }

  invalidate(): void {
    this.#source = undefined;
    this.inner.invalidate();
  }

  handleMouse(event: Parameters<NonNullable<Component["handleMouse"]>>[0]) {
    return this.inner.handleMouse?.(event);
  }
}

const wrappers = new WeakMap<Component, InertLines>();

function inert(component: Component): Component {
  let wrapper = wrappers.get(component);
  if (!wrapper) wrappers.set(component, wrapper = new InertLines(component));
  return wrapper;
}

function withCleanContext<C extends { args?: unknown; lastComponent?: unknown }>(context: C): C {
  const last = context.lastComponent instanceof InertLines
    ? context.lastComponent.inner
    : context.lastComponent;
  return { ...context, args: cleanArgs(context.args), lastComponent: last };
}

/**
 * A tool's renderers, wrapped: they see cleaned arguments and draw lines that keep styling only.
 * An empty slot stays empty (pi's fallback strips results' text), except the call: pi's fallback
 * prints string arguments as they are, so a minimal inert one replaces it.
 */
export function inertRenderers(toolName: string, slots: ToolRendererSlots): ToolRendererSlots {
  const { renderCall, renderResult } = slots;
  return {
    ...slots,
    renderCall: renderCall
      ? (args, theme, context) =>
        inert(renderCall(cleanArgs(args), theme, withCleanContext(context)))
      : (args, theme) => inert(fallbackCall(toolName, cleanArgs(args), theme)),
    renderResult: renderResult
      ? (result, options, theme, context) =>
        inert(renderResult(cleanArgs(result), options, theme, withCleanContext(context)))
      : undefined,
  };
}

/** The tool's name and its arguments as JSON, wrapped (JSON escapes every control). */
function fallbackCall(
  toolName: string,
  args: unknown,
  theme: { fg(color: string, text: string): string; bold(text: string): string },
): Component {
  const json = JSON.stringify(args) ?? "";
  const preview = json.length > 200 ? `${json.slice(0, 197)}...` : json;
  const title = theme.fg("toolTitle", theme.bold(sanitizeMultiline(toolName)));
  return new Text(`${title} ${theme.fg("muted", preview)}`, 0, 0);
}
