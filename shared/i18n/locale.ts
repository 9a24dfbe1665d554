/**
 * Which language the human reads: the one table of strings ({@link msg}) for
 * this process, picked once from `LC_ALL`, then `LC_MESSAGES`, then `LANG`
 * (POSIX precedence, empty values skipped): Brazilian Portuguese for `pt_BR…`
 * and any other `pt…`, English for everything else (`C`, `POSIX`, unset).
 *
 * Only what the human reads follows it: the modals, the notices, the
 * `/sudo-prompt` commands, the doctor, the install, uninstall and audit
 * reports, and the terminal guardian's and lock keeper's line (pi hands it to
 * them). What the agent hears, the audit log,
 * the system log and the reason names stay English (machine-read).
 *
 * Adding a language is two files: pi's table typed as {@link Messages} (see
 * `pt_BR.ts`) and the tools' table (`tools_pt_BR.ts`), one entry in
 * {@link TABLES} and in `tools_locale.ts`, and one rule in
 * {@link pickLanguage}; `tests/unit/shared/i18n_test.ts` checks that each
 * has every key, with the same parameters. pi's process loads only this
 * module's tables; the doctor and the CLIs read `tools_locale.ts`.
 *
 * Runtime-neutral (`node:process` only); an environment that cannot be read
 * (a Deno process without `--allow-env`) means English.
 *
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
 * The language for an environment: the first of `LC_ALL`, `LC_MESSAGES` and
 * `LANG` that is set and not empty decides; `pt`, `pt_BR.UTF-8`, `pt_PT`…
 * give `pt_BR`, anything else (and nothing) `en`. Pure.
 */
export function pickLanguage(env: Readonly<Record<string, string | undefined>>): Language {
  const value = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((v) => v !== undefined && v !== "");
  return value !== undefined && /^pt(?:[_.@-]|$)/i.test(value) ? "pt_BR" : "en";
}

/** This process's language, or English when its environment cannot be read. */
function processLanguage(): Language {
  try {
    return pickLanguage({
      LC_ALL: process.env.LC_ALL,
      LC_MESSAGES: process.env.LC_MESSAGES,
      LANG: process.env.LANG,
    });
  } catch {
    return "en";
  }
}

/** The language of this process, picked once when it loads this module. */
export const LANGUAGE: Language = processLanguage();

/** The strings of {@link LANGUAGE}: what every user-facing text of the product reads. */
export const msg: Messages = TABLES[LANGUAGE];
