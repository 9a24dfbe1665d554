/**
 * One request's whole life, top-down ({@link serveRequest}): read → verify the peer →
 * policy and pairing → wait for the modal → keyboard gate → ask → re-check → write. Each
 * step calls the module that owns it; a failed one ends the request with a named refusal
 * or a denial before anything later runs.
 *
 * @module
 */
import {
  decodeIncoming,
  DENY_REASONS,
  type DenyReason,
  encodeDenied,
  passwordProblem,
  type PasswordRequest,
  type SecretRequest,
} from "../../askpass/protocol.ts";
import { type ExpectedBroker, verifyBroker } from "./broker_verification.ts";
import { PEER_CREDENTIAL_ERRORS, type PeerCredentials } from "../../kernel/peer_credentials.ts";
import {
  type ExpectedHelper,
  judgeRequester,
  readRequester,
  type RequesterReading,
  VERIFY_REFUSALS,
} from "../../kernel/peer_verification.ts";
import { ptraceScope } from "../../kernel/yama.ts";
import type { PairingGuard } from "../pairing/pairing_guard.ts";
import { processRefusalNotice } from "./refusal_advice.ts";
import { ROOT_RUN_REFUSALS, rootRunWarnings } from "./root_program.ts";
import { ticketHolderOf } from "./call_credentials.ts";
import { sanitizePrompt } from "../../askpass/prompt_text.ts";
import type { PromptOutcome, UncheckedProcess } from "../../askpass/prompter.ts";
import type { AttemptCounter } from "./attempt_counter.ts";
import { cachingAllowedNow, credentialDecision } from "./credential_policy.ts";
import type { ModalQueue } from "./modal_queue.ts";
import type { PeerConnection } from "./peer_connection.ts";
import { handOver, replyWithPassword } from "./handover.ts";
import {
  type Admitted,
  CONNECTION_ERRORS,
  type RefusalReason,
  type SessionEvent,
  type SessionSettings,
} from "./session_types.ts";

/** Request ids remembered against replay (the oldest is forgotten first). */
const SEEN_ID_CAPACITY = 4096;

/** What a session gives its requests: its settings, queue and pairing guard. */
export interface SessionParts {
  readonly settings: SessionSettings;
  /** The helper the session pins, and the broker it expects. */
  readonly expected: ExpectedHelper;
  readonly expectedBroker: ExpectedBroker;
  /** Time to answer one request, from its arrival. */
  readonly timeoutMs: number;
  readonly queue: ModalQueue;
  readonly pairing: PairingGuard;
  /** The shell prelude, removed from the command the modal shows. */
  readonly prelude: string;
}

/** What every request of one session shares: its parts, and the session's memory of requests. */
export interface RequestContext extends SessionParts {
  readonly attempts: AttemptCounter;
  /** Request ids already seen (replay), bounded by {@link SEEN_ID_CAPACITY}. */
  readonly seenIds: Set<string>;
  /** The last argv shown without allowlist approval (for `/sudo-prompt allow`). */
  lastUnverifiedArgv?: readonly string[];
}

/** When a connection was accepted (`performance.now()`), and the reads of its peer started then. */
export type EarlyReads = { readonly arrivedAt: number; readonly reading?: RequesterReading };

/** Serves one request from its frame `body` to its one answer; throws only on the unexpected. */
export async function serveRequest(
  ctx: RequestContext,
  connection: PeerConnection,
  body: Uint8Array,
  early: EarlyReads,
): Promise<void> {
  const { queue, settings } = ctx;
  const { socket, creds, peerPid } = connection;
  // 1. Read: one well-formed frame, never seen before.
  const decoded = decodeIncoming(body);
  if (!decoded.ok) {
    if (!connection.end()) return;
    queue.emit({ kind: "refused", reason: decoded.reason, peerPid });
    return void socket.destroy();
  }
  const request = decoded.message;
  // Ends the request once: reports `event`, then answers with a denial for `reason`.
  const end = async (event: SessionEvent, reason: DenyReason) => {
    if (!connection.end()) return;
    queue.emit(event);
    await queue.reply(socket, encodeDenied(request.id, reason));
  };
  const refuse = (reason: RefusalReason, notice?: string) =>
    end(
      { kind: "refused", reason, peerPid, requestId: request.id, notice },
      DENY_REASONS.VERIFICATION_FAILED,
    );
  const deny = (reason: DenyReason) =>
    end({ kind: "denied", requestId: request.id, reason }, reason);
  if (ctx.seenIds.has(request.id)) return refuse(CONNECTION_ERRORS.REPLAYED_REQUEST);
  rememberId(ctx.seenIds, request.id);
  if (!creds.ok) {
    return refuse(
      creds.reason === PEER_CREDENTIAL_ERRORS.FFI_UNAVAILABLE
        ? VERIFY_REFUSALS.FFI_UNAVAILABLE
        : VERIFY_REFUSALS.PEER_CREDENTIALS_FAILED,
    );
  }

  // 2. Verify the peer (and, for a sudo, its policy and pairing).
  const started = performance.now();
  const admitted = request.type === "password_request"
    ? await admitSudo(ctx, connection, creds.creds, request, early)
    : await admitSecret(ctx, creds.creds, request);
  if (!admitted.ok) return refuse(admitted.reason, admitted.notice);
  const entry = admitted.entry;
  const verifyMs = performance.now() - started;
  if (queue.closing || socket.destroyed) {
    connection.end();
    return void socket.destroy();
  }
  if (queue.pendingCount() >= (settings.queueCapacity ?? 8)) return deny(DENY_REASONS.QUEUE_FULL);
  if (entry.attempt > (settings.maxAttempts ?? 3)) return deny(DENY_REASONS.ATTEMPTS_EXHAUSTED);
  if (entry.kind === "secret" && !settings.prompter.promptSecret) {
    return deny(DENY_REASONS.NO_INTERACTIVE_UI);
  }

  // 3. Wait for the one modal (the queue ends it at its deadline, or when its peer goes).
  const pending = queue.enqueue(entry, connection, ctx.timeoutMs, {
    kind: "queued",
    requestId: request.id,
    request: entry.kind,
    argv: entry.argv,
    attempt: entry.attempt,
    verifyMs,
  });
  if (!await queue.turn(pending)) return;

  // 4. The keyboard gate: nobody else holds a terminal the modal reads (ADR 0007).
  if (!await queue.gate(pending, "open") || connection.ended) return;
  queue.watchGate(pending);

  // 5. Ask.
  queue.emit({ kind: "prompted", requestId: pending.id, attempt: pending.attempt });
  const recheck = () => connection.ended ? Promise.resolve(false) : queue.gate(pending, "open");
  let outcome: PromptOutcome;
  try {
    outcome = await pending.ask(pending.abort.signal, recheck);
  } catch {
    return queue.finish(pending, DENY_REASONS.CANCELLED);
  }
  if (outcome.kind !== "submit") {
    return queue.finish(pending, DENY_REASONS.CANCELLED, undefined, outcome.reply);
  }

  // 6. Re-check, 7. write: the password is zeroed whatever happens.
  const password = outcome.password;
  try {
    if (connection.ended) return;
    if (passwordProblem(password)) return await queue.finish(pending, DENY_REASONS.CANCELLED);
    // Right before the secret leaves: still the same processes?
    if (!await queue.alive(pending)) return await queue.finish(pending, DENY_REASONS.PROCESS_GONE);
    if (connection.ended) return;
    // …is the helper's pipe still the shown sudo's (ADR 0005), and did nobody take the
    // keyboard since the last check (ADR 0007)? Side by side; nothing leaves unless both pass.
    const [paired, gated] = await Promise.all([
      pending.kind === "sudo" ? ctx.pairing.confirm(pending.id) : undefined,
      queue.gate(pending, "send"), // a closed gate has refused the request itself
    ]);
    if (!gated || connection.ended) return;
    if (paired && !paired.ok) {
      return await queue.refuse(pending, paired.reason, processRefusalNotice(paired));
    }
    if (connection.ended) return;
    // A secret travels in the reply; a sudo password goes into sudo's pipe (ADR 0008).
    if (pending.kind === "secret") await replyWithPassword(pending, password, queue);
    else await handOver(pending, password, queue);
  } catch {
    // An unexpected throw while answering denies the request (fail closed).
    await queue.finish(pending, DENY_REASONS.CANCELLED);
  } finally {
    password.fill(0);
  }
}

/** A verified request, or the named reason (and notice) it is refused with. */
type Admission =
  | { readonly ok: true; readonly entry: Admitted }
  | { readonly ok: false; readonly reason: RefusalReason; readonly notice?: string };

/** A sudo's request: kernel checks, credential policy (ADR 0006), pairing (ADR 0005), red lines. */
async function admitSudo(
  ctx: RequestContext,
  connection: PeerConnection,
  creds: PeerCredentials,
  request: PasswordRequest,
  early: EarlyReads,
): Promise<Admission> {
  const { inode } = connection;
  if (inode === undefined || !early.reading) {
    return { ok: false, reason: VERIFY_REFUSALS.CONNECTION_OWNER_UNKNOWN };
  }
  // A peer that was not yet the pinned deno when it connected is read
  // again now (it may have exec'd since: the checks then name why).
  const reading = await early.reading.pinned
    ? early.reading
    : readRequester(ctx.expected, creds, inode);
  const verdict = await judgeRequester(ctx.expected, creds, connection.pidfd, reading, request);
  if (!verdict.ok) return verdict;
  const requester = verdict.requester;
  // Before any modal: would the password leave a sudo ticket behind? (ADR 0006)
  const cache = credentialDecision(requester.sudoArgv, cachingAllowedNow(ctx.settings));
  if (!cache.ok) return cache;
  // Only the sudo the modal shows may get the password (ADR 0005); beside it, its red lines.
  const [paired, warnings] = await Promise.all([
    ctx.pairing.admit(request.id, requester, early.arrivedAt),
    rootRunWarnings(requester.sudoArgv),
  ]);
  if (!paired.ok) return { ...paired, notice: processRefusalNotice(paired) };
  if (warnings.length > 0 && ctx.settings.refuseRiskySudo) {
    const risky = { reason: ROOT_RUN_REFUSALS.RISKY_SUDO, pid: requester.sudo.pid };
    return { ok: false, reason: risky.reason, notice: processRefusalNotice(risky) };
  }
  const { attempts, queue, settings } = ctx;
  const attempt = attempts.next(requester.sudo);
  const unchecked = { pairing: paired.unchecked ?? [], gate: [] as readonly UncheckedProcess[] };
  const entry: Admitted = {
    unchecked,
    id: request.id,
    kind: "sudo",
    argv: requester.sudoArgv,
    pipeInode: requester.pipeInode,
    attempt,
    watched: [requester.helper, requester.sudo],
    ask: (signal, recheck) =>
      settings.prompter.prompt({
        requestId: request.id,
        sudoArgv: requester.sudoArgv,
        toolCommand: withoutPrelude(requester.toolCommand, ctx.prelude),
        promptText: sanitizePrompt(request.prompt),
        attempt,
        maxAttempts: settings.maxAttempts ?? 3,
        deadline: queue.deadlineOf(request.id),
        waiting: () => queue.waitingBehind(request.id),
        unchecked: () => [...unchecked.pairing, ...unchecked.gate],
        recheck,
        covers: cache.createsTicket ? "call" : "sudo",
        warnings,
      }, signal),
    delivered: () => attempts.recordSubmit(requester.sudo),
  };
  // The process its ticket would be keyed to: the call's end ends it (ADR 0009 §4).
  if (!cache.createsTicket) return { ok: true, entry };
  return { ok: true, entry: { ...entry, ticket: await ticketHolderOf(requester.sudo.pid) } };
}

/** A `pi-secret-run` request: its broker verified through the kernel (ADR 0002). */
async function admitSecret(
  ctx: RequestContext,
  creds: PeerCredentials,
  request: SecretRequest,
): Promise<Admission> {
  const verdict = await verifyBroker(ctx.expectedBroker, creds, request);
  if (!verdict.ok) return verdict;
  const { queue, settings } = ctx;
  // The verified broker (root, from root-owned files) says whether the argv
  // is allowlisted; reading the file again here would only repeat it.
  const allowlisted = request.allowlisted;
  // No Yama, or scope 0: the agent can trace the command the broker runs (and its secret).
  const scope = await ptraceScope();
  const traceable = scope === undefined || scope === 0;
  const entry: Admitted = {
    id: request.id,
    kind: "secret",
    argv: request.argv,
    pipeInode: undefined,
    unchecked: { pairing: [], gate: [] },
    attempt: 1,
    watched: [verdict.verified.broker, verdict.verified.sudo],
    ask: (signal, recheck) => {
      // Remembered once shown, even if then cancelled (docs/design.md §5, /sudo-prompt allow).
      if (!allowlisted) ctx.lastUnverifiedArgv = [...request.argv];
      return settings.prompter.promptSecret!({
        requestId: request.id,
        argv: request.argv,
        cwd: request.cwd,
        label: request.label,
        allowlisted,
        traceable,
        recheck,
        deadline: queue.deadlineOf(request.id),
        waiting: () => queue.waitingBehind(request.id),
      }, signal);
    },
    delivered: () => {},
  };
  return { ok: true, entry };
}

function rememberId(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > SEEN_ID_CAPACITY) seen.delete(seen.values().next().value as string);
}

/** The tool command as written: `[shell, "-c", text]` without our `sudo()` prelude. */
function withoutPrelude(argv: readonly string[] | null, prelude: string): readonly string[] | null {
  if (!argv || prelude === "" || argv.length < 3 || argv[1] !== "-c") return argv;
  const text = argv[2];
  if (!text.startsWith(prelude + "\n")) return argv;
  return [argv[0], "-c", text.slice(prelude.length + 1), ...argv.slice(3)];
}
