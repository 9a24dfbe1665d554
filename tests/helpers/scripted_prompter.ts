/**
 * A {@link Prompter} that answers from a script instead of a human, and
 * records what it was shown, so tests can assert attempts, order, and that an
 * attack never reached the prompt at all.
 *
 * @module
 */
import type {
  Prompter,
  PromptOutcome,
  PromptRequest,
  SecretPromptRequest,
  UncheckedProcess,
} from "../../askpass/prompter.ts";

/** One scripted answer. */
export type ScriptedAnswer =
  | { readonly submit: string }
  | { readonly cancel: true }
  /** Never answers; resolves cancel only when the server aborts. */
  | { readonly hang: true }
  /** Waits for `release()` from the test, then submits. */
  | { readonly gate: Promise<string> }
  /** Submits once this many other requests wait behind the prompt (an event, not a delay). */
  | { readonly submit: string; readonly whenWaiting: number };

/** Snapshot of one prompt as the prompter saw it. */
export interface SeenPrompt {
  readonly request: Omit<PromptRequest, "waiting" | "unchecked">;
  /** Others waiting when the prompt opened, and when it was answered. */
  readonly waiting: number;
  /** The processes named as not checked when the prompt opened. */
  readonly unchecked: readonly UncheckedProcess[];
  waitingAtAnswer?: number;
  readonly startedAt: number;
  endedAt?: number;
  aborted?: boolean;
}

/** Snapshot of one secret request as the prompter saw it. */
export interface SeenSecret {
  readonly request: Omit<SecretPromptRequest, "waiting">;
  readonly startedAt: number;
  endedAt?: number;
  aborted?: boolean;
}

/** A scripted prompter plus what it recorded. */
export class ScriptedPrompter implements Prompter {
  readonly seen: SeenPrompt[] = [];
  /** Secret requests (the "Secret request" modal), in order. */
  readonly secrets: SeenSecret[] = [];
  #script: ScriptedAnswer[];
  #active = 0;
  /** Most prompts that were open at the same time. */
  maxConcurrent = 0;

  constructor(script: ScriptedAnswer[]) {
    this.#script = [...script];
  }

  async prompt(request: PromptRequest, signal: AbortSignal): Promise<PromptOutcome> {
    const { waiting, unchecked, ...rest } = request;
    const record: SeenPrompt = {
      request: rest,
      waiting: waiting(),
      unchecked: unchecked?.() ?? [],
      startedAt: Date.now(),
    };
    this.seen.push(record);
    this.#active++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.#active);
    try {
      const answer = this.#script.shift() ?? { cancel: true };
      const outcome = await answerOrAbort(answer, signal, waiting);
      record.aborted = signal.aborted;
      record.waitingAtAnswer = waiting();
      return outcome;
    } finally {
      record.endedAt = Date.now();
      this.#active--;
    }
  }

  async promptSecret(request: SecretPromptRequest, signal: AbortSignal): Promise<PromptOutcome> {
    const { waiting: _waiting, ...rest } = request;
    const record: SeenSecret = { request: rest, startedAt: Date.now() };
    this.secrets.push(record);
    this.#active++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.#active);
    try {
      const outcome = await answerOrAbort(
        this.#script.shift() ?? { cancel: true },
        signal,
        () => 0,
      );
      record.aborted = signal.aborted;
      return outcome;
    } finally {
      record.endedAt = Date.now();
      this.#active--;
    }
  }
}

function answerOrAbort(
  answer: ScriptedAnswer,
  signal: AbortSignal,
  waiting: () => number,
): Promise<PromptOutcome> {
  return new Promise((resolve) => {
    const onAbort = () => resolve({ kind: "cancel" });
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    const submit = (text: string) => {
      signal.removeEventListener("abort", onAbort);
      resolve({ kind: "submit", password: new TextEncoder().encode(text) });
    };
    if ("hang" in answer) return;
    if ("gate" in answer) return void answer.gate.then(submit);
    if ("whenWaiting" in answer) {
      // The session's request deadline aborts a wait that never comes (then: cancel).
      const poll = setInterval(() => {
        if (signal.aborted) clearInterval(poll);
        else if (waiting() >= answer.whenWaiting) {
          clearInterval(poll);
          submit(answer.submit);
        }
      }, 10);
      return;
    }
    setTimeout(() => {
      if (signal.aborted) return;
      if ("submit" in answer) submit(answer.submit);
      else {
        signal.removeEventListener("abort", onAbort);
        resolve({ kind: "cancel" });
      }
    }, 0);
  });
}
