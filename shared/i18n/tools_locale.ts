/**
 * The strings of the tools that run in their own process (the doctor, the
 * CLIs, `audit verify`): pi's table of {@link LANGUAGE} and the tools' own
 * table of it, as one {@link msg}. Kept apart from `locale.ts` so that pi's
 * process, which imports only that, never loads the tools' text.
 *
 * @module
 */
import { LANGUAGE, type Language, type Messages, msg as piMsg } from "./locale.ts";
import { toolsEn } from "./tools_en.ts";
import { toolsPtBR } from "./tools_pt_BR.ts";

/** The shape every tools table has: English's keys, each a string or a function of the same arity. */
export type ToolMessages = typeof toolsEn;

/** Every tools table, by language. */
export const TOOL_TABLES: Readonly<Record<Language, ToolMessages>> = {
  en: toolsEn,
  pt_BR: toolsPtBR,
};

/** What the tools print, in this process's language: pi's strings and the tools' own. */
export const msg: Messages & ToolMessages = { ...piMsg, ...TOOL_TABLES[LANGUAGE] };
