/**
 * The language the human reads, picked once per process, and its table {@link msg}
 * (docs/design.md §1). Adding a language: its two tables, an entry in {@link TABLES} and in
 * `tools_locale.ts`, a rule in {@link pickLanguage}.
 * @module
 */
import process from "node:process";
import { en, type Messages } from "./en.ts";
import { ptBR } from "./pt_BR.ts";

/** A language with a table. */
export type Language = "en" | "pt_BR";

/** Every table, by language. */
export const TABLES: Readonly<Record<Language, Messages>> = { en, pt_BR: ptBR };

/**
 * The first non-empty of `LC_ALL`, `LC_MESSAGES`, `LANG` decides: `pt`, `pt_BR.UTF-8`, `pt_PT`…
 * give `pt_BR`, anything else `en`.
 */
export function pickLanguage(env: Readonly<Record<string, string | undefined>>): Language {
  const value = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((v) => v !== undefined && v !== "");
  return value !== undefined && /^pt(?:[_.@-]|$)/i.test(value) ? "pt_BR" : "en";
}

/**
 * The language of this process, picked once when it loads this module. No Deno entry point loads
 * it (pi and the tools run on Node), so the environment is always readable.
 */
export const LANGUAGE: Language = pickLanguage(process.env);

/** The strings of {@link LANGUAGE}: what every user-facing text of the product reads. */
export const msg: Messages = TABLES[LANGUAGE];
