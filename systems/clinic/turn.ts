import { assistantMeta } from "./message-meta";
import { HumanHold } from "./human";
import type { HistoryMessage } from "./prompt";
import { MODEL_UNAVAILABLE_REPLY } from "./templates";
import { ClinicState, initialClinicState } from "./types";
import { ESCALATION_PREFIX } from "../../storage/outcome-stats";
import type { Llm } from "../../llm/client";
import type { Sql, Tx } from "../../storage/db";
import type { ClinicTurnContext } from "./store/turn-context";
import { messagesInsert } from "../../storage/messages";
import { loadSnapshot, type SnapshotRow } from "../../storage/snapshots";
import { clinicSpec, registryFor } from "./registry-load";
import { AppError } from "../../driver/errors";
import type { Run } from "../../driver/run";
import type { ClinicEvents, ClinicFinal } from "./contract";
import { runTurn } from "../../driver/turn";
import { markEscalated, saveContactPhone, setEscalationReason, type Handling } from "../../storage/inbox";
import { enqueueOutbox } from "../../storage/outbox";
import { appendThreadEvent } from "../../storage/thread-events";
import { deskAt } from "./desk";
import { deskOf } from "./store/desk";
import { clinicEffects, clinicStages, newTurnRecord, type ClinicFinalEmitted, type TurnRecord } from "./turn-effects";

/** The clinic turn: the dialogue machine's effects (turn-effects.ts) and one commit. */

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

/** How many times a turn is applied again on a snapshot operators moved on meanwhile (each waits for one operator action). */
const REAPPLY = 8;

/** How many stored messages a turn reads as the dialogue history. */
export const HISTORY_MESSAGES = 12;

/** The thread state as stored (initial before the first turn); read without a turn. */
export async function readClinicState(sql: Sql, threadId: string): Promise<ClinicState> {
  return clinicStateOf(await loadSnapshot(sql, threadId));
}

/** Who holds the thread (the machine's `handler.human`), as stored; null: the bot answers. */
export async function readClinicHuman(sql: Sql, threadId: string): Promise<HumanHold | null> {
  const row = await loadSnapshot(sql, threadId);
  const parsed = HumanHold.safeParse((row?.snapshot as { context?: { human?: unknown } } | undefined)?.context?.human);
  return parsed.success ? parsed.data : null;
}

export function clinicStateOf(row: SnapshotRow | null): ClinicState {
  const ctx = (row?.snapshot as { context?: { state?: unknown } } | undefined)?.context;
  const parsed = ClinicState.safeParse(ctx?.state);
  return parsed.success ? parsed.data : initialClinicState();
}

/**
 * The history the prompts see: the patient's and the bot's messages, and what an operator wrote
 * while holding the thread — as the clinic's side of the dialogue, marked as the administrator's,
 * so after a release the bot knows what the patient was told.
 */
export function promptHistory(history: { role: string; text: string }[]): HistoryMessage[] {
  return history.flatMap((m): HistoryMessage[] =>
    m.role === "user" || m.role === "assistant"
      ? [{ role: m.role, text: m.text }]
      : m.role === "operator"
        ? [{ role: "assistant", text: `[Администратор клиники]: ${m.text}` }]
        : [],
  );
}

const isHeld = (f: ClinicFinalEmitted) => f.events.includes("held_by_operator");
/** A held turn the bot answers with nothing (systems/clinic/human.ts heldAnswer). */
const silent = (f: ClinicFinalEmitted) => isHeld(f) && f.reply === "";
/** A patient's message while a human holds the thread (the holding reply, or the emergency one). */
const toHuman = (f: ClinicFinalEmitted) => f.withHuman || isHeld(f);

export async function runClinicTurn(a: ClinicTurnArgs): Promise<ClinicFinal> {
  const loaded = await registryFor(a.sql, a.tenantId, a.context.settingsVersions);
  const spec = clinicSpec(a.tenantId, loaded);
  const before = clinicStateOf(a.context.snapshot);
  const history = promptHistory(a.context.history);
  const stages = clinicStages(a.run, { debugDir: a.debugDir, secrets: a.secrets });
  stages.emit("00", "metadata", () => ({
    kind: "clinic",
    threadId: a.context.threadId,
    settings: loaded.versions,
    backend: a.llm.offline ? "offline" : "openai-compatible",
  }));
  stages.emit("01", "original-request", () => ({ text: a.text }));
  stages.emit("08", "conversation-context", () => ({ historyMessages: history.length, stateBefore: before }));
  const rec = newTurnRecord();
  // What the front desk promises now (working hours) and how long a held thread stays quiet.
  const now = new Date();
  const desk = deskAt(await deskOf(a.sql, a.tenantId), now);
  // The reply's meta as stored, built once per final: the message stores it and the run's `final`
  // refers to it (runMessages and writes below), so both must be the very same object.
  const replyMeta = new WeakMap<ClinicFinalEmitted, ReturnType<typeof assistantMeta>>();
  const storedMeta = (f: ClinicFinalEmitted) => {
    if (!replyMeta.has(f)) {
      const stored = assistantMeta(f, loaded.versions, a.context.namedSettings);
      // The bot's answer a take overtook (issue 43): the patient gets the holding reply, the operator the draft.
      if (draft.text !== null && isHeld(f)) stored.meta = { ...stored.meta, botDraft: draft.text };
      replyMeta.set(f, stored);
    }
    return replyMeta.get(f)!;
  };
  // What the bot had answered before an operator's action overtook the turn (see `reapply` below).
  const draft: { text: string | null } = { text: null };

  const result = await runTurn({
    sql: a.sql,
    run: a.run,
    spec,
    key: a.context.threadId,
    conversationId: a.context.threadId,
    input: {},
    stored: a.context.snapshot,
    // The clock and the desk's silence come in with the event: the machine stays pure, the log replays.
    events: [{ type: "patient.message", text: a.text, at: now.toISOString(), holdRepeatMs: desk.holdingRepeatMs }],
    // The machine is generated from the settings: the log names the versions that built it.
    log: { settings: loaded.versions },
    // One writer at a time, nothing thrown away (issue 43): an operator who took (wrote, released)
    // while the model streamed moved the snapshot on; the turn applies again on top of it with the
    // model's answers it already has — a thread now held stores the patient's words with the
    // holding reply, and the model's text is kept for the operator (meta.botDraft, the thread event).
    reapply: REAPPLY,
    onReapply: () => {
      if (rec.final && !isHeld(rec.final) && draft.text === null) draft.text = rec.final.reply;
      rec.final = null;
      rec.failed = null;
    },
    discard: () => rec.failed !== null,
    effects: clinicEffects({
      sql: a.sql,
      llm: a.llm,
      run: a.run,
      tenantId: a.tenantId,
      loaded,
      history,
      text: a.text,
      contactKnown: !!a.handling?.contactPhone,
      desk,
      stages,
      rec,
    }),
    // The run's two messages (`writes` below): the log refers to the patient's text and the reply,
    // the run's `final` to the reply and the state, instead of storing them again.
    runMessages: () =>
      rec.final
        ? {
            user: a.text,
            assistant: silent(rec.final) ? undefined : { text: rec.final.reply, ...storedMeta(rec.final) },
          }
        : undefined,
    // The common turn commits in one statement: the snapshot, the log, the run and these messages.
    writes: (_, when) => {
      if (!rec.final) throw new AppError("internal", "clinic turn ended without a reply");
      const f = rec.final;
      return messagesInsert(
        a.sql,
        a.context.threadId,
        [
          { role: "user", text: a.text },
          // A quiet hold (an operator is talking to the patient): the bot says nothing, nothing is stored for it.
          ...(silent(f) ? [] : [{ role: "assistant" as const, text: f.reply, meta: storedMeta(f).meta }]),
        ],
        a.run.id,
        // A patient writing into a closed thread opens it again: in the same statement.
        { reopen: true, when },
      );
    },
    // The rarer writes of an escalation or a held thread (the inbox fields, the webhook's outbox row,
    // the thread's event for the operator), in a transaction with the commit statement.
    needsCommit: () => {
      const f = rec.final;
      return (
        !!rec.phone ||
        (!!f && (toHuman(f) || f.events.includes("escalated"))) ||
        (f?.state.activeBranch === "escalate_human" && !!f.state.escalationReason)
      );
    },
    commit: (tx) => commitEscalation(tx, a, rec, draft.text),
    closing: () => {
      const f = rec.final!;
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
    outcome: () => outcomeOf(rec.final!),
  });
  if (result.discarded && rec.failed) {
    const f = rec.failed;
    // Nothing of the turn was written: the patient reads a clear message and the thread is as before.
    const data: ClinicFinal = { reply: MODEL_UNAVAILABLE_REPLY, state: before, events: ["model_unavailable"] };
    stages.emit("12", "response-validation", () => ({ events: data.events, error: `${f.role}: ${f.message}` }));
    stages.finish();
    const publish = await a.run.commit([{ event: "final", data }], {
      outcome: "model_unavailable",
      reasonCodes: ["model_unavailable"],
    });
    publish();
    return data;
  }
  stages.finish();
  const f = rec.final!;
  return { reply: f.reply, state: f.state, events: f.events };
}

/** The turn's outcome; an escalation's reason rides along as `escalation:<reason>` for /v1/stats/outcomes. */
function outcomeOf(f: ClinicFinalEmitted) {
  if (isHeld(f)) return { outcome: "held_by_operator", reasonCodes: ["held_by_operator"] };
  const escalated = f.events.includes("escalated");
  const reason = escalated ? (f.state.escalationReason ?? "unknown") : null;
  return {
    outcome: escalated ? "escalated" : "answered",
    reasonCodes: [...f.events.filter((x) => x !== "sticky"), ...(reason ? [`${ESCALATION_PREFIX}${reason}`] : [])],
  };
}

async function commitEscalation(tx: Tx, a: ClinicTurnArgs, rec: TurnRecord, botDraft: string | null): Promise<void> {
  const f = rec.final!;
  const id = a.context.threadId;
  if (rec.phone) await saveContactPhone(tx, id, rec.phone);
  if (toHuman(f)) {
    // The operator holding the thread sees the patient's message live (the thread's event stream).
    await appendThreadEvent(tx, {
      conversationId: id,
      kind: "patient.message",
      data: {
        text: a.text,
        reply: f.reply,
        runId: a.run.id,
        events: f.events,
        contactPhone: rec.phone,
        ...(botDraft !== null && isHeld(f) ? { botDraft } : {}),
      },
    });
    if (isHeld(f)) return;
  }
  if (f.events.includes("escalated")) {
    await markEscalated(tx, id, f.state.escalationReason);
    if (a.webhook) {
      await enqueueOutbox(tx, {
        tenantId: a.tenantId,
        conversationId: id,
        event: "conversation.escalated",
        payload: {
          tenantId: a.tenantId,
          system: "clinic",
          conversationId: id,
          reason: f.state.escalationReason,
          runId: a.run.id,
          patientText: a.text,
          reply: f.reply,
          contactPhone: rec.phone ?? a.handling?.contactPhone ?? null,
          at: new Date().toISOString(),
        },
      });
    }
  } else if (f.state.activeBranch === "escalate_human" && f.state.escalationReason) {
    // A reason named on a later turn of the escalation (the model's STATE_JSON, the patient's words).
    await setEscalationReason(tx, id, f.state.escalationReason);
  }
}
