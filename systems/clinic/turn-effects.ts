import { createHash } from "node:crypto";
import { buildBranchMessages, buildRouterMessages, BRANCH_PROMPT, ROUTER_PROMPT } from "./prompt";
import type { HistoryMessage, KnowledgeFragment } from "./prompt";
import { createTailFilter } from "./service-tail";
import { branchResult } from "./turn-guards";
import { OFFLINE_LABEL, type Llm } from "../../llm/client";
import type { DialogueEmitted } from "./dialogue.machine";
import { searchChunks } from "./store/kb";
import type { Sql } from "../../storage/db";
import type { LoadedRegistry } from "./registry-load";
import { AppError } from "../../driver/errors";
import { CONTRACT_STAGES, runStages, type StageData } from "../../driver/stages";
import type { Run } from "../../driver/run";
import type { ClinicEvents } from "./contract";
import { asksForContact, CONTACT_REQUEST, CONTACT_SAVED, phoneFromText } from "./contact";
import { keepPromise, type DeskNow } from "./desk";

/**
 * The clinic dialogue machine's effects, answered by the router and branch models and the
 * knowledge base (one handler per emitted event, as in driver/turn.ts), and what the turn
 * records of them for its commit: the final the machine emitted, a model failure, the router
 * call for the routing stage, a phone the patient gave.
 */

export type ClinicFinalEmitted = Extract<DialogueEmitted, { type: "clinic.final" }>;
export type ClinicFailedEmitted = Extract<DialogueEmitted, { type: "clinic.failed" }>;

/** What one turn learns from its effects (a record per turn, read by its commit). */
export interface TurnRecord {
  final: ClinicFinalEmitted | null;
  /** The machine's own failure state (a `model.failed` event): the turn is void, nothing is written. */
  failed: ClinicFailedEmitted | null;
  /** The branch call (effect.branch `call`) that last streamed tokens to the client; null: none has. */
  streamedCall: number | null;
  /** The router call's details, for the routing stage written when the machine has read the decision. */
  routerCall: { raw: string; model: string; attempts: number; system: string; t0: number } | null;
  /** With a human (escalated or held): the patient's phone, taken from the message while unknown. */
  phone: string | null;
}

export const newTurnRecord = (): TurnRecord => ({
  final: null,
  failed: null,
  streamedCall: null,
  routerCall: null,
  phone: null,
});

/**
 * The clinic's stages (CONTRACT §4 numbering) on the driver's recorder: a subset runs, a repeated
 * one (a second branch call) is kept, and the rest are written as skipped when the turn finishes.
 * Each stage's data is a function: a turn nobody debugs builds none of it (driver/stages.ts).
 */
export function clinicStages(run: Run<ClinicEvents>, o: { debugDir?: string; secrets?: string[] }) {
  const rec = runStages(run, { stages: CONTRACT_STAGES, dir: o.debugDir ?? null, secrets: o.secrets });
  return {
    emit: (stageId: string, name: string, data: () => StageData, startedAt = performance.now()) =>
      rec.record(stageId, "ok", data, performance.now() - startedAt, name),
    finish: () => rec.finish(),
  };
}
export type ClinicStages = ReturnType<typeof clinicStages>;

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

export interface EffectsArgs {
  sql: Sql;
  llm: Llm;
  run: Run<ClinicEvents>;
  tenantId: string;
  loaded: LoadedRegistry;
  history: HistoryMessage[];
  text: string;
  /** The patient's phone is already known (the thread's inbox row). */
  contactKnown: boolean;
  /** The front desk now: an escalation out of hours promises its next opening (systems/clinic/desk.ts). */
  desk: DeskNow;
  stages: ClinicStages;
  rec: TurnRecord;
}

export function clinicEffects(a: EffectsArgs) {
  const { rec, stages, loaded, history } = a;
  const failure = (role: "router" | "branch", error: { code: string; message: string }) => {
    if (error.code === "cancelled") throw new AppError("internal", "client went away");
    return { type: "model.failed" as const, role, message: error.message };
  };
  return {
    "effect.router": async (e: Extract<DialogueEmitted, { type: "effect.router" }>, ctx: { signal: AbortSignal }) => {
      const t0 = performance.now();
      const messages = buildRouterMessages(history, String(e.text), undefined, loaded.registry.router?.system_prompt);
      const r = await a.llm.complete("router", messages, { signal: ctx.signal });
      if (!r.ok) return failure("router", r.error);
      rec.routerCall = {
        raw: r.value,
        model: r.meta.model,
        attempts: r.meta.attempts,
        system: messages[0]!.content,
        t0,
      };
      return { type: "router.result" as const, text: r.value };
    },
    // The router's answer is parsed once, by the machine; this reports what it read.
    "clinic.routed": (e: Extract<DialogueEmitted, { type: "clinic.routed" }>) => {
      const intent = e.intent;
      a.run.emit("router_decision", { intent });
      const rc = rec.routerCall!;
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
    "effect.retrieve": async (e: Extract<DialogueEmitted, { type: "effect.retrieve" }>) => {
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
      return { type: "retrieve.result" as const, fragments };
    },
    "effect.branch": async (e: Extract<DialogueEmitted, { type: "effect.branch" }>, ctx: { signal: AbortSignal }) => {
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
      const forward = (delta: string) => {
        if (!delta) return;
        // A branch that spoke before handing off: keep its words apart from the next branch's.
        if (rec.streamedCall !== null && rec.streamedCall !== e.call) a.run.emit("token", { delta: "\n\n" });
        rec.streamedCall = e.call;
        a.run.emit("token", { delta });
      };
      const r = await a.llm.stream("branch", messages, {
        signal: ctx.signal,
        onDelta: (d) => forward(filter.push(d)),
      });
      if (!r.ok) return failure("branch", r.error);
      forward(filter.end());
      // The offline provider labels every text; a bare handoff signal should not carry that label into the reply.
      const text = a.llm.offline && /\[\s*INTENT_CHANGE/i.test(r.value) ? r.value.replace(OFFLINE_LABEL, "") : r.value;
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
      // The filter's reading is the machine's when it read exactly this text (no retry's leftovers, no relabel).
      return branchResult(text, filter.readingOf(text));
    },
    "clinic.failed": (e: ClinicFailedEmitted) => {
      rec.failed = e;
    },
    "clinic.final": (e: ClinicFinalEmitted) => {
      rec.final = withContact(a, e);
      const f = rec.final;
      stages.emit("12", "response-validation", () => ({ events: f.events, notes: f.notes, state: f.state }));
    },
  };
}

/**
 * With a human (escalated, or an operator holds the thread) the patient's phone is taken from the
 * message, and asked for while unknown after an escalation. The emergency reply stays exactly as
 * written (red-flags.ts): nothing is added to it.
 */
/**
 * An escalation out of the desk's hours (issue 43): the reply promises the next opening, not an
 * answer within the hour (the emergency reply stays as written). What changed is streamed as one
 * more token after a note, as the contact request is.
 */
function escalatedInHours(a: EffectsArgs, final: ClinicFinalEmitted): ClinicFinalEmitted {
  if (a.desk.open || !final.events.includes("escalated") || final.events.includes("red_flag")) return final;
  const reply = keepPromise(final.reply, a.desk);
  if (reply === final.reply) return final;
  if (a.rec.streamedCall !== null && reply.startsWith(final.reply))
    a.run.emit("token", { delta: reply.slice(final.reply.length) });
  return { ...final, reply };
}

function withContact(a: EffectsArgs, final: ClinicFinalEmitted): ClinicFinalEmitted {
  const held = final.events.includes("held_by_operator");
  if (final.state.activeBranch !== "escalate_human" && !held) return final;
  a.rec.phone = a.contactKnown ? null : phoneFromText(a.text);
  if (held) {
    // No model streamed it: the holding reply goes out as one token, as a model's would (a quiet
    // hold says nothing, unless a phone was saved).
    const reply = a.rec.phone ? `${CONTACT_SAVED} ${final.reply}`.trim() : final.reply;
    if (reply) a.run.emit("token", { delta: reply });
    return { ...final, reply };
  }
  final = escalatedInHours(a, final);
  if (
    a.contactKnown ||
    a.rec.phone ||
    !final.events.includes("escalated") ||
    final.events.includes("red_flag") ||
    asksForContact(final.reply)
  )
    return final;
  if (a.rec.streamedCall !== null) a.run.emit("token", { delta: `\n\n${CONTACT_REQUEST}` });
  return { ...final, reply: final.reply ? `${final.reply}\n\n${CONTACT_REQUEST}` : CONTACT_REQUEST };
}
