/**
 * Test-only pi extension: a scripted model ("faux" provider, model "faux-1").
 *
 * Load it with `pi -e tests/pi/faux_provider.ts --provider faux --model faux-1`.
 * The responses come from the JSON file named by the env var `PI_FAUX_SCRIPT`:
 * an array of steps, answered one per model call, in order:
 *
 * - `{ "bash": "<command>", "timeout"?: <seconds> }`: one `bash` tool call
 *   (stopReason `toolUse`);
 * - `{ "tool": "<name>", "args": { ... } }`: one call of any other tool;
 * - `{ "text": "..." }`: a plain final message (stopReason `stop`).
 *
 * After the last step every further model call answers "done", so extra
 * turns never fail with "No more faux responses queued". Without
 * `PI_FAUX_SCRIPT` the model always answers "done".
 *
 * @module
 */
import { readFileSync } from "node:fs";
import {
  type AssistantMessage,
  createFauxCore,
  fauxAssistantMessage,
  fauxToolCall,
  type JsonObject,
} from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

/** One step of a faux script (see the module doc). */
export type FauxStep =
  | { bash: string; timeout?: number }
  | { tool: string; args?: JsonObject }
  | { text: string };

/** Provider id, model id and api id used by this extension. */
export const FAUX_PROVIDER = "faux";
export const FAUX_MODEL = "faux-1";
export const FAUX_API = "faux-script";

/** Text answered once the script is exhausted. */
export const FAUX_DONE_TEXT = "done";

/**
 * Parses and validates a faux script (the JSON text of `PI_FAUX_SCRIPT`).
 * Throws an error naming the offending step on bad input.
 */
export function parseFauxScript(json: string): FauxStep[] {
  const data: unknown = JSON.parse(json);
  if (!Array.isArray(data)) {
    throw new Error("faux script: expected a JSON array of steps");
  }
  return data.map((raw: unknown, i): FauxStep => {
    if (raw === null || typeof raw !== "object") {
      throw new Error(`faux script: step ${i} is not an object`);
    }
    const step = raw as Record<string, unknown>;
    if (typeof step.bash === "string") {
      const timeout = step.timeout;
      if (timeout !== undefined && typeof timeout !== "number") {
        throw new Error(`faux script: step ${i}: timeout must be a number`);
      }
      return timeout === undefined ? { bash: step.bash } : { bash: step.bash, timeout };
    }
    if (typeof step.tool === "string") {
      const args = step.args ?? {};
      if (args === null || typeof args !== "object" || Array.isArray(args)) {
        throw new Error(`faux script: step ${i}: args must be an object`);
      }
      // Parsed from JSON text, so every nested value is a JsonValue.
      return { tool: step.tool, args: args as JsonObject };
    }
    if (typeof step.text === "string") return { text: step.text };
    throw new Error(
      `faux script: step ${i} needs "bash", "tool" or "text": ${JSON.stringify(raw)}`,
    );
  });
}

/** Converts one script step into the assistant message the model returns. */
export function stepToMessage(step: FauxStep): AssistantMessage {
  if ("bash" in step) {
    const args: JsonObject = { command: step.bash };
    if (step.timeout !== undefined) args.timeout = step.timeout;
    return fauxAssistantMessage([fauxToolCall("bash", args)], {
      stopReason: "toolUse",
    });
  }
  if ("tool" in step) {
    return fauxAssistantMessage([fauxToolCall(step.tool, step.args ?? {})], {
      stopReason: "toolUse",
    });
  }
  return fauxAssistantMessage(step.text);
}

function loadSteps(): FauxStep[] {
  const path = process.env.PI_FAUX_SCRIPT;
  if (!path) return [];
  return parseFauxScript(readFileSync(path, "utf8"));
}

/** Extension factory: registers provider "faux" with model "faux-1". */
export default function fauxProviderExtension(pi: ExtensionAPI): void {
  const core = createFauxCore({
    api: FAUX_API,
    provider: FAUX_PROVIDER,
    models: [{ id: FAUX_MODEL, name: "Faux Model", input: ["text"] }],
    // Stream fast: tests wait on the screen, not on token pacing.
    tokenSize: { min: 64, max: 64 },
  });
  core.setResponses(loadSteps().map(stepToMessage));
  const model = core.getModel();
  pi.registerProvider(FAUX_PROVIDER, {
    name: "Faux (scripted)",
    baseUrl: model.baseUrl,
    apiKey: "faux-key",
    api: FAUX_API,
    // Required: without streamSimple pi's model-registry refresh drops the
    // api registration and interactive prompts fail ("No API provider…").
    streamSimple: (m, context, options) => {
      if (core.getPendingResponseCount() === 0) {
        core.appendResponses([fauxAssistantMessage(FAUX_DONE_TEXT)]);
      }
      return core.streamSimple(m, context, options);
    },
    models: [{
      id: model.id,
      name: model.name,
      reasoning: false,
      input: ["text"],
      cost: model.cost,
      contextWindow: model.contextWindow,
      maxTokens: model.maxTokens,
    }],
  });
}
