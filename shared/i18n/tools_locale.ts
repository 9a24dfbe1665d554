/**
 * The strings of the tools that run in their own process (the doctor, the
 * CLIs, `audit verify`): pi's table of {@link LANGUAGE} and the tools' own
 * table of it, as one {@link msg}. Kept apart from `locale.ts` so that pi's
 * process, which imports only that, never loads the tools' text.
 *
 * @module
 */
import type { Messages } from "./en.ts";
import { LANGUAGE, type Language, msg as piMsg } from "./locale.ts";
import { type ToolMessages, toolsEn } from "./tools_en.ts";
import { toolsPtBR } from "./tools_pt_BR.ts";

/** Every tools table, by language. */
export const TOOL_TABLES: Readonly<Record<Language, ToolMessages>> = {
  en: toolsEn,
  pt_BR: toolsPtBR,
};

/** What the tools print, in this process's language: pi's strings and the tools' own. */
export const msg: Messages & ToolMessages = { ...piMsg, ...TOOL_TABLES[LANGUAGE] };
