import { createHash } from "node:crypto";
import { assistantMeta } from "./message-meta";
import { buildBranchMessages, buildRouterMessages, BRANCH_PROMPT, ROUTER_PROMPT } from "./prompt";
import type { HistoryMessage, KnowledgeFragment } from "./prompt";
import { createTailFilter } from "./service-tail";
import { MODEL_UNAVAILABLE_REPLY } from "./templates";
import { ClinicState, initialClinicState } from "./types";
import { ESCALATION_PREFIX } from "../../storage/outcome-stats";
import { OFFLINE_LABEL, type Llm } from "../../llm/client";
import type { DialogueEmitted } from "./dialogue.machine";
import { searchChunks } from "./store/kb";
import type { Sql } from "../../storage/db";
import type { ClinicTurnContext } from "./store/turn-context";
import { messagesInsert } from "../../storage/messages";
import { loadSnapshot, type SnapshotRow } from "../../storage/snapshots";
import { clinicSpec, registryFor } from "./registry-load";
import { AppError } from "../../driver/errors";
import { CONTRACT_STAGES, runStages, type StageData } from "../../driver/stages";
import type { Run } from "../../driver/run";
import type { ClinicEvents, ClinicFinal } from "./contract";
import { runTurn } from "../../driver/turn";
import { asksForContact, CONTACT_REQUEST, phoneFromText } from "./contact";
import { markEscalated, saveContactPhone, setEscalationReason, type Handling } from "../../storage/inbox";
import { enqueueOutbox } from "../../storage/outbox";

/** The clinic turn: the dialogue machine's effects answered by the router/branch models and the knowledge base. */

export interface ClinicTurnArgs {
  sql: Sql;
  llm: Llm;
  run: Run<ClinicEvents>;
  tenantId: string;
  /** The thread with its snapshot, history and active settings versions, read before the run started (storage/clinic-turn-context.ts). */
  context: ClinicTurnContext;
  text: string;
  /** AI_DEBUG: also write the stages as files under this directory. */
  debugDir?: string;
  /** The thread's inbox row as read before the turn (the contact already known). */
  handling?: Handling | null;
  /** WEBHOOK_URL is set: an escalation writes an outbox row in the turn's transaction. */
  webhook?: boolean;
  /** Configured credentials scrubbed from every stage. */
  secrets?: string[];
}

export type { ClinicFinal };

type ClinicFinalEmitted = Extract<DialogueEmitted, { type: "clinic.final" }>;

/** How many stored messages a turn reads as the dialogue history. */
export const HISTORY_MESSAGES = 12;

/** The thread state as stored (initial before the first turn); read without a turn. */
export async function readClinicState(sql: Sql, threadId: string): Promise<ClinicState> {
  return clinicStateOf(await loadSnapshot(sql, threadId));
}

function clinicStateOf(row: SnapshotRow | null): ClinicState {
  const ctx = (row?.snapshot as { context?: { state?: unknown } } | undefined)?.context;
  const parsed = ClinicState.safeParse(ctx?.state);
  return parsed.success ? parsed.data : initialClinicState();
}

/**
 * The clinic's stages (CONTRACT §4 numbering) on the driver's recorder: a subset runs, a repeated
 * one (a second branch call) is kept, and the rest are written as skipped when the turn finishes.
 * Each stage's data is a function: a turn nobody debugs builds none of it (driver/stages.ts).
 */
function clinicStages(a: ClinicTurnArgs) {
  const rec = runStages(a.run, { stages: CONTRACT_STAGES, dir: a.debugDir ?? null, secrets: a.secrets });
  return {
    emit: (stageId: string, name: string, data: () => StageData, startedAt = performance.now()) =>
      rec.record(stageId, "ok", data, performance.now() - startedAt, name),
    finish: () => rec.finish(),
  };
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

export async function runClinicTurn(a: ClinicTurnArgs): Promise<ClinicFinal> {
  const loaded = await registryFor(a.sql, a.tenantId, a.context.settingsVersions);
  const spec = clinicSpec(a.tenantId, loaded);
  const before = clinicStateOf(a.context.snapshot);
  const history: HistoryMessage[] = a.context.history
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => ({ role: m.role as "user" | "assistant", text: m.text }));
  const stages = clinicStages(a);
  stages.emit("00", "metadata", () => ({
    kind: "clinic",
    threadId: a.context.threadId,
    settings: loaded.versions,
    backend: a.llm.offline ? "offline" : "openai-compatible",
  }));
  stages.emit("01", "original-request", () => ({ text: a.text }));
  stages.emit("08", "conversation-context", () => ({ historyMessages: history.length, stateBefore: before }));
  let final: ClinicFinalEmitted | null = null;
  // The reply's meta as stored, built once per final: the message stores it and the run's `final`
  // refers to it (runMessages and writes below), so both must be the very same object.
  let replyMeta: { of: ClinicFinalEmitted; stored: ReturnType<typeof assistantMeta> } | null = null;
  const storedMeta = (f: ClinicFinalEmitted) => {
    if (replyMeta?.of !== f) replyMeta = { of: f, stored: assistantMeta(f, loaded.versions, a.context.namedSettings) };
    return replyMeta.stored;
  };
  // The machine's own failure state (a `model.failed` event): the turn is void, nothing is written.
  let failed: Extract<DialogueEmitted, { type: "clinic.failed" }> | null = null;
  let streamed = false;
  // The router call's details, for the routing stage written when the machine has read the decision.
  let routerCall: { raw: string; model: string; attempts: number; system: string; t0: number } | null = null;
  // With a human now: the patient's phone is taken from the message, and asked for while unknown.
  let phone: string | null = null;

  const failure = (role: "router" | "branch", error: { code: string; message: string }) => {
    if (error.code === "cancelled") throw new AppError("internal", "client went away");
    return { type: "model.failed" as const, role, message: error.message };
  };

  const result = await runTurn({
    sql: a.sql,
    run: a.run,
    spec,
    key: a.context.threadId,
    conversationId: a.context.threadId,
    input: {},
    stored: a.context.snapshot,
    events: [{ type: "patient.message", text: a.text }],
    // The machine is generated from the settings: the log names the versions that built it.
    log: { settings: loaded.versions },
    discard: () => failed !== null,
    effects: {
      "effect.router": async (e, ctx) => {
        const t0 = performance.now();
        const messages = buildRouterMessages(history, String(e.text), undefined, loaded.registry.router?.system_prompt);
        const r = await a.llm.complete("router", messages, { signal: ctx.signal });
        if (!r.ok) return failure("router", r.error);
        routerCall = { raw: r.value, model: r.meta.model, attempts: r.meta.attempts, system: messages[0]!.content, t0 };
        return { type: "router.result", text: r.value };
      },
      // The router's answer is parsed once, by the machine; this reports what it read.
      "clinic.routed": (e) => {
        const intent = e.intent;
        a.run.emit("router_decision", { intent });
        const rc = routerCall!;
        stages.emit(
          "04",
          "routing",
          () => ({
            intent,
            raw: rc.raw.slice(0, 500),
            model: rc.model,
            attempts: rc.attempts,
            prompt: { ...ROUTER_PROMPT, sha256: sha256(rc.system) },
            router: loaded.registry.router ? `${loaded.registry.router.code}@${loaded.registry.router.version}` : null,
            system: rc.system,
          }),
          rc.t0,
        );
      },
      "effect.retrieve": async (e) => {
        const t0 = performance.now();
        const hits = await searchChunks(a.sql, a.tenantId, String(e.query), { branch: String(e.branch), limit: 3 });
        const fragments: KnowledgeFragment[] = hits.map((h) => ({
          docId: h.docId,
          title: h.heading,
          text: h.text,
          score: h.score,
        }));
        stages.emit(
          "05",
          "documentation",
          () => ({
            branch: e.branch,
            query: e.query,
            fragments: hits.map((h) => ({ docId: h.docId, heading: h.heading, text: h.text, score: h.score })),
          }),
          t0,
        );
        return { type: "retrieve.result", fragments };
      },
      "effect.branch": async (e, ctx) => {
        const t0 = performance.now();
        // The machine built the prompt (with the [ПОДСКАЗКА РОУТЕРА] block or, CLINIC_ROUTER_HINT=off, without).
        const system = String(e.system);
        const messages = buildBranchMessages(system, history, String(e.text));
        stages.emit("10", "prompt-manifest", () => ({
          branch: e.branch,
          call: e.call,
          hint: e.hint,
          prompt: { ...BRANCH_PROMPT, sha256: sha256(system) },
          settings: loaded.versions,
          system,
        }));
        const filter = createTailFilter();
        let first = true;
        const forward = (delta: string) => {
          if (!delta) return;
          // A branch that spoke before handing off: keep its words apart from the next branch's.
          if (first && streamed) a.run.emit("token", { delta: "\n\n" });
          first = false;
          streamed = true;
          a.run.emit("token", { delta });
        };
        const r = await a.llm.stream("branch", messages, {
          signal: ctx.signal,
          onDelta: (d) => forward(filter.push(d)),
        });
        if (!r.ok) return failure("branch", r.error);
        forward(filter.end());
        // The offline provider labels every text; a bare handoff signal should not carry that label into the reply.
        const text =
          a.llm.offline && /\[\s*INTENT_CHANGE/i.test(r.value) ? r.value.replace(OFFLINE_LABEL, "") : r.value;
        stages.emit(
          "11",
          "model-request",
          () => ({
            branch: e.branch,
            call: e.call,
            model: r.meta.model,
            attempts: r.meta.attempts,
            promptChars: r.meta.promptChars,
            raw: r.value,
          }),
          t0,
        );
        return { type: "branch.result", text };
      },
      "clinic.failed": (e) => {
        failed = e as unknown as Extract<DialogueEmitted, { type: "clinic.failed" }>;
      },
      "clinic.final": (e) => {
        final = e as unknown as ClinicFinalEmitted;
        if (final.state.activeBranch === "escalate_human" && !a.handling?.contactPhone) {
          phone = phoneFromText(a.text);
          // The emergency reply stays exactly as written (red-flags.ts): nothing is added to it.
          if (
            !phone &&
            final.events.includes("escalated") &&
            !final.events.includes("red_flag") &&
            !asksForContact(final.reply)
          ) {
            final = { ...final, reply: final.reply ? `${final.reply}\n\n${CONTACT_REQUEST}` : CONTACT_REQUEST };
            if (streamed) a.run.emit("token", { delta: `\n\n${CONTACT_REQUEST}` });
          }
        }
        const f = final;
        stages.emit("12", "response-validation", () => ({ events: f.events, notes: f.notes, state: f.state }));
      },
    },
    // The run's two messages (`writes` below): the log refers to the patient's text and the reply,
    // the run's `final` to the reply and the state, instead of storing them again.
    runMessages: () =>
      final
        ? {
            user: a.text,
            assistant: { text: final.reply, ...storedMeta(final) },
          }
        : undefined,
    // The common turn commits in one statement: the snapshot, the log, the run and these messages.
    writes: (_, when) => {
      if (!final) throw new AppError("internal", "clinic turn ended without a reply");
      const f = final;
      return messagesInsert(
        a.sql,
        a.context.threadId,
        [
          { role: "user", text: a.text },
          {
            role: "assistant",
            text: f.reply,
            meta: storedMeta(f).meta,
          },
        ],
        a.run.id,
        // A patient writing into a closed thread opens it again: in the same statement.
        { reopen: true, when },
      );
    },
    // The rarer writes of an escalation (the thread's inbox fields, the webhook's outbox row),
    // in a transaction with the commit statement: they update the conversation row the reopening touches.
    needsCommit: () =>
      !!phone ||
      !!final?.events.includes("escalated") ||
      (final?.state.activeBranch === "escalate_human" && !!final.state.escalationReason),
    commit: async (tx) => {
      const f = final!;
      if (phone) await saveContactPhone(tx, a.context.threadId, phone);
      if (f.events.includes("escalated")) {
        await markEscalated(tx, a.context.threadId, f.state.escalationReason);
        if (a.webhook) {
          await enqueueOutbox(tx, {
            tenantId: a.tenantId,
            conversationId: a.context.threadId,
            event: "conversation.escalated",
            payload: {
              tenantId: a.tenantId,
              system: "clinic",
              conversationId: a.context.threadId,
              reason: f.state.escalationReason,
              runId: a.run.id,
              patientText: a.text,
              reply: f.reply,
              contactPhone: phone ?? a.handling?.contactPhone ?? null,
              at: new Date().toISOString(),
            },
          });
        }
      } else if (f.state.activeBranch === "escalate_human" && f.state.escalationReason) {
        // A reason named on a later turn of the escalation (the model's STATE_JSON, the patient's words).
        await setEscalationReason(tx, a.context.threadId, f.state.escalationReason);
      }
    },
    closing: () => {
      const f = final!;
      // The debug notes go out only to a debugging client (the Sandbox); a patient's client never sees them.
      return [
        {
          event: "final",
          data: {
            reply: f.reply,
            state: f.state,
            events: f.events,
            ...(a.run.debug && f.notes.length ? { notes: f.notes } : {}),
          },
        },
      ];
    },
    outcome: () => {
      const escalated = final!.events.includes("escalated");
      const reason = escalated ? (final!.state.escalationReason ?? "unknown") : null;
      // The reason rides along as `escalation:<reason>` so /v1/stats/outcomes can count escalations by reason.
      return {
        outcome: escalated ? "escalated" : "answered",
        reasonCodes: [
          ...final!.events.filter((x) => x !== "sticky"),
          ...(reason ? [`${ESCALATION_PREFIX}${reason}`] : []),
        ],
      };
    },
  });
  if (result.discarded && failed) {
    const f = failed as Extract<DialogueEmitted, { type: "clinic.failed" }>;
    // Nothing of the turn was written: the patient reads a clear message and the thread is as before.
    const data: ClinicFinal = { reply: MODEL_UNAVAILABLE_REPLY, state: before, events: ["model_unavailable"] };
    stages.emit("12", "response-validation", () => ({ events: data.events, error: `${f.role}: ${f.message}` }));
    stages.finish();
    const publish = await a.sql.begin((tx) =>
      a.run.complete(tx, [{ event: "final", data }], {
        outcome: "model_unavailable",
        reasonCodes: ["model_unavailable"],
      }),
    );
    publish();
    return data;
  }
  stages.finish();
  const f = final!;
  return { reply: f.reply, state: f.state, events: f.events };
}

/**
 * An operator releases an escalated thread (issue 14 item 7): the `operator.release` event goes
 * through the dialogue machine like any other, so it is logged and replay still rebuilds the
 * snapshot. Refused (conflict) when the thread is not with a human.
 */
export async function releaseClinicThread(
  sql: Sql,
  tenantId: string,
  context: ClinicTurnContext,
): Promise<ClinicState> {
  const before = clinicStateOf(context.snapshot);
  if (before.activeBranch !== "escalate_human")
    throw new AppError("conflict", "Диалог не передан оператору: освобождать нечего.");
  const loaded = await registryFor(sql, tenantId, context.settingsVersions);
  const r = await runTurn({
    sql,
    run: null,
    spec: clinicSpec(tenantId, loaded),
    key: context.threadId,
    conversationId: context.threadId,
    input: {},
    stored: context.snapshot,
    events: [{ type: "operator.release" }],
    log: { settings: loaded.versions },
  });
  return ClinicState.parse((r.snapshot as { context: { state: unknown } }).context.state);
}
