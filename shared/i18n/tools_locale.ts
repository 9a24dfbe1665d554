/**
 * The tools' strings: pi's table of {@link LANGUAGE} and the tools' own, as one {@link msg}. Apart
 * from `locale.ts` so that pi's process never loads the tools' text.
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
