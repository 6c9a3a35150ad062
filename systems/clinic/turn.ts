import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buildBranchMessages, buildRouterMessages, routerHintBlock, BRANCH_PROMPT, ROUTER_PROMPT } from "./prompt";
import type { HistoryMessage, KnowledgeFragment } from "./prompt";
import { parseRouterOutput } from "./router-output";
import { createTailFilter } from "./service-tail";
import { MODEL_UNAVAILABLE_REPLY } from "./templates";
import { ClinicState, initialClinicState } from "./types";
import { OFFLINE_LABEL, type Llm } from "../../llm/client";
import type { DialogueEmitted } from "./dialogue.machine";
import { searchChunks } from "./store/kb";
import type { Sql } from "../../storage/db";
import type { ClinicTurnContext } from "./store/turn-context";
import { appendMessages } from "../../storage/messages";
import { loadSnapshot, type SnapshotRow } from "../../storage/snapshots";
import { clinicSpec, registryFor } from "./registry-load";
import { AppError } from "../../driver/errors";
import { stageEnabled } from "../../driver/stage-switches";
import type { Run } from "../../driver/run";
import type { ClinicEvents, ClinicFinal } from "./contract";
import { runTurn } from "../../driver/turn";

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
}

export type { ClinicFinal };

/** How many stored messages a turn reads as the dialogue history. */
export const HISTORY_MESSAGES = 12;

class ModelUnavailable extends Error {}

/** The thread state as stored (initial before the first turn); read without a turn. */
export async function readClinicState(sql: Sql, threadId: string): Promise<ClinicState> {
  return clinicStateOf(await loadSnapshot(sql, threadId));
}

function clinicStateOf(row: SnapshotRow | null): ClinicState {
  const ctx = (row?.snapshot as { context?: { state?: unknown } } | undefined)?.context;
  const parsed = ClinicState.safeParse(ctx?.state);
  return parsed.success ? parsed.data : initialClinicState();
}

/** CONTRACT §4: every run's numbered stages; the clinic runs a subset, the rest are written as skipped. */
const STAGES: [string, string][] = [
  ["00", "metadata"], ["01", "original-request"], ["02", "normalization"], ["03", "plan"], ["04", "routing"],
  ["05", "documentation"], ["06", "domain-resolution"], ["07", "interaction-clarification"], ["08", "conversation-context"],
  ["09", "adequacy-context-plan"], ["10", "prompt-manifest"], ["11", "model-request"], ["12", "response-validation"],
];

function stageWriter(run: Run<ClinicEvents>, debugDir: string | undefined) {
  const written: { stageId: string; name: string; payload: unknown }[] = [];
  return {
    emit(stageId: string, name: string, data: unknown, startedAt = performance.now()) {
      const payload = { stageId, name, status: "ok" as const, durationMs: Math.round(performance.now() - startedAt), data };
      if (run.debug) run.emit("stage", payload);
      if (debugDir) written.push({ stageId, name, payload });
    },
    /** With AI_DEBUG: NN-name.json per stage (a repeated stage, e.g. a second branch call, gets -2, -3…). */
    async flush() {
      if (!debugDir) return;
      const dir = join(debugDir, run.id);
      // Debug files are best effort: an unwritable directory must not fail a committed turn.
      if (!(await mkdir(dir, { recursive: true }).then(() => true, () => false))) return;
      const seen = new Map<string, number>();
      const files = written.map((w) => {
        const n = (seen.get(w.stageId) ?? 0) + 1;
        seen.set(w.stageId, n);
        return writeFile(join(dir, `${w.stageId}-${w.name}${n > 1 ? `-${n}` : ""}.json`), JSON.stringify(w.payload, null, 2));
      });
      for (const [id, name] of STAGES)
        if (!seen.has(id)) files.push(writeFile(join(dir, `${id}-${name}.json`), JSON.stringify({ stageId: id, name, status: "skipped", durationMs: 0, data: null }, null, 2)));
      await Promise.all(files).catch(() => {});
    },
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
  const stages = stageWriter(a.run, a.debugDir);
  stages.emit("00", "metadata", { kind: "clinic", threadId: a.context.threadId, settings: loaded.versions, backend: a.llm.offline ? "offline" : "openai-compatible" });
  stages.emit("01", "original-request", { text: a.text });
  stages.emit("08", "conversation-context", { historyMessages: history.length, stateBefore: before });
  let final: Extract<DialogueEmitted, { type: "clinic.final" }> | null = null;
  let streamed = false;

  const fail = (role: string, error: { code: string; message: string }): never => {
    if (error.code === "cancelled") throw new AppError("internal", "client went away");
    throw new ModelUnavailable(`${role}: ${error.message}`);
  };

  try {
    await runTurn({
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
      effects: {
        "effect.router": async (e, ctx) => {
          const t0 = performance.now();
          const messages = buildRouterMessages(history, e.text, undefined, loaded.registry.router?.system_prompt);
          const r = await a.llm.complete("router", messages, { signal: ctx.signal });
          if (!r.ok) return fail("router", r.error);
          const intent = parseRouterOutput(r.value);
          a.run.emit("router_decision", { intent });
          stages.emit("04", "routing", { intent, raw: r.value.slice(0, 500), model: r.meta.model, attempts: r.meta.attempts, prompt: { ...ROUTER_PROMPT, sha256: sha256(messages[0]!.content) }, router: loaded.registry.router ? `${loaded.registry.router.code}@${loaded.registry.router.version}` : null, system: messages[0]!.content }, t0);
          return { type: "router.result", text: r.value };
        },
        "effect.retrieve": async (e) => {
          const t0 = performance.now();
          const hits = await searchChunks(a.sql, a.tenantId, e.query, { branch: e.branch, limit: 3 });
          const fragments: KnowledgeFragment[] = hits.map((h) => ({ docId: h.docId, title: h.heading, text: h.text, score: h.score }));
          stages.emit("05", "documentation", { branch: e.branch, query: e.query, fragments: hits.map((h) => ({ docId: h.docId, heading: h.heading, text: h.text, score: h.score })) }, t0);
          return { type: "retrieve.result", fragments };
        },
        "effect.branch": async (e, ctx) => {
          const t0 = performance.now();
          // CLINIC_ROUTER_HINT=off: the stepped branch is called without the [ПОДСКАЗКА РОУТЕРА] block.
          const system = stageEnabled("routerHint") || !e.hint ? e.system : e.system.replace(`\n\n${routerHintBlock(e.hint, e.branch)}`, "");
          const messages = buildBranchMessages(system, history, e.text);
          stages.emit("10", "prompt-manifest", { branch: e.branch, call: e.call, hint: e.hint, prompt: { ...BRANCH_PROMPT, sha256: sha256(system) }, settings: loaded.versions, system });
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
          const r = await a.llm.stream("branch", messages, { signal: ctx.signal, onDelta: (d) => forward(filter.push(d)) });
          if (!r.ok) return fail("branch", r.error);
          forward(filter.end());
          // The offline provider labels every text; a bare handoff signal should not carry that label into the reply.
          const text = a.llm.offline && /\[\s*INTENT_CHANGE/i.test(r.value) ? r.value.replace(OFFLINE_LABEL, "") : r.value;
          stages.emit("11", "model-request", { branch: e.branch, call: e.call, model: r.meta.model, attempts: r.meta.attempts, promptChars: r.meta.promptChars, raw: r.value }, t0);
          return { type: "branch.result", text };
        },
        "clinic.final": (e) => {
          final = e;
          stages.emit("12", "response-validation", { events: final.events, notes: final.notes, state: final.state });
        },
      },
      commit: async (tx) => {
        if (!final) throw new AppError("internal", "clinic turn ended without a reply");
        const f = final;
        await appendMessages(
          tx,
          a.context.threadId,
          [
            { role: "user", text: a.text },
            {
              role: "assistant",
              text: f.reply,
              meta: {
                activeBranch: f.state.activeBranch,
                routerDecision: f.state.routerDecision,
                step: f.state.step,
                events: f.events,
                escalationReason: f.state.escalationReason,
                handoffCount: f.state.handoffCount,
                fragments: f.fragments.map((x) => x.docId),
                settings: loaded.versions,
                // Why a tail or a signal was not used (the Sandbox shows them on the turn's badges).
                ...(f.notes.length ? { notes: f.notes } : {}),
              },
            },
          ],
          a.run.id,
        );
      },
      closing: () => {
        const f = final!;
        // The debug notes go out only to a debugging client (the Sandbox); a patient's client never sees them.
        return [{ event: "final", data: { reply: f.reply, state: f.state, events: f.events, ...(a.run.debug && f.notes.length ? { notes: f.notes } : {}) } }];
      },
      outcome: () => ({ outcome: final!.events.includes("escalated") ? "escalated" : "answered", reasonCodes: final!.events.filter((x) => x !== "sticky") }),
    });
    await stages.flush();
    const f = final!;
    return { reply: f.reply, state: f.state, events: f.events };
  } catch (e) {
    if (!(e instanceof ModelUnavailable)) throw e;
    // Nothing of the turn was written: the patient reads a clear message and the thread is as before.
    const data: ClinicFinal = { reply: MODEL_UNAVAILABLE_REPLY, state: before, events: ["model_unavailable"] };
    stages.emit("12", "response-validation", { events: data.events, error: e.message });
    await stages.flush();
    const publish = await a.sql.begin((tx) => a.run.complete(tx, [{ event: "final", data }], { outcome: "model_unavailable", reasonCodes: ["model_unavailable"] }));
    publish();
    return data;
  }
}

/**
 * An operator releases an escalated thread (issue 14 item 7): the `operator.release` event goes
 * through the dialogue machine like any other, so it is logged and replay still rebuilds the
 * snapshot. Refused (conflict) when the thread is not with a human.
 */
export async function releaseClinicThread(sql: Sql, tenantId: string, context: ClinicTurnContext): Promise<ClinicState> {
  const before = clinicStateOf(context.snapshot);
  if (before.activeBranch !== "escalate_human") throw new AppError("conflict", "Диалог не передан оператору: освобождать нечего.");
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
