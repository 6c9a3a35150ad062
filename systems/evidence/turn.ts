// One evidence turn through the driver: the machine sends effects, the handlers of effects.ts
// answer each with an event, and the turn commits in one transaction (snapshot, messages,
// artifacts, run outcome) from the final snapshot; `final` follows the commit.
import type { Fragment as PgFragment } from "postgres";
import type { SnapshotFrom } from "xstate";
import type { Run } from "../../driver/run";
import { runStages } from "../../driver/stages";
import { runTurn } from "../../driver/turn";
import type { Deps } from "../../http/deps";
import { configuredSecrets } from "../../http/secrets";
import { messagesInsert } from "../../storage/messages";
import type { EvidenceEvents } from "./contract";
import { evidenceMachine, evidenceSpec } from "./conversation.machine";
import { evidenceEffects, type TurnSide } from "./effects";
import type { EvidenceTools } from "./mcp-config";
import { evidenceRunInsert } from "./store/evidence-runs";
import { EVIDENCE_STAGES } from "./trace";

export interface EvidenceTurnArgs {
  deps: Deps;
  run: Run<EvidenceEvents>;
  tools: EvidenceTools;
  conversationId: string;
  tenantId: string;
  text: string;
}

type Snapshot = SnapshotFrom<typeof evidenceMachine>;
type Fragment = PgFragment;

export async function runEvidenceTurn(a: EvidenceTurnArgs): Promise<void> {
  const { deps, run } = a;
  const t: TurnSide = {
    run,
    llm: deps.llm,
    offline: deps.llm.offline,
    tools: a.tools,
    trace: runStages(run, {
      stages: EVIDENCE_STAGES,
      dir: deps.config.aiDebug ? deps.config.debugDir : null,
      secrets: configuredSecrets(deps.config),
      log: deps.log,
      // The stage list and the debug view are stored with every run (evidence_runs.artifacts).
      keep: true,
    }),
    modelCalls: { preparatory: 0, final: 0 },
    rejected: [],
    notes: {
      recorded: null,
      contextStaged: false,
      answerStarted: 0,
      interpreterCall: "offline",
      plannerCall: "offline",
    },
  };
  recordStart(t, a);
  await a.tools.prepare();
  try {
    await runTurn({
      sql: deps.db.sql,
      run,
      spec: evidenceSpec,
      key: a.conversationId,
      conversationId: a.conversationId,
      input: { conversationId: a.conversationId },
      events: [{ type: "user.message", text: a.text, requestId: run.id, offline: t.offline }],
      log: {},
      effects: evidenceEffects(t),
      // One commit statement: the snapshot, the log, the run, the messages and the run's artifacts.
      writes: (s, when) => turnWrites(t, a, s, when),
      closing: (s) => turnClosing(t, a, s),
      outcome: (s) => ({ outcome: s.context.last!.outcome, reasonCodes: s.context.last!.reasonCodes }),
    });
  } finally {
    t.trace.finish();
  }
}

/** Stages 00 and 01: what ran this turn, and the question word for word. */
function recordStart(t: TurnSide, a: EvidenceTurnArgs) {
  const models = t.offline
    ? "offline"
    : {
        interpreter: t.llm.modelFor("planner"),
        planner: t.llm.modelFor("planner"),
        critic: t.llm.modelFor("planner"),
        answer: t.llm.modelFor("answer"),
      };
  t.trace.record(
    "00",
    "ok",
    {
      runId: t.run.id,
      conversationId: a.conversationId,
      kind: "evidence",
      machine: { id: evidenceSpec.id, version: evidenceSpec.version },
      models,
      mcp: a.tools.caller.label,
      toolTimeoutMs: a.tools.settings.timeoutMs,
    },
    0,
  );
  t.trace.record("01", "ok", { text: a.text }, 0);
}

function turnWrites(t: TurnSide, a: EvidenceTurnArgs, s: Snapshot, when: Fragment) {
  const { deps, run } = a;
  const last = s.context.last!;
  const w = t.notes.recorded!.work;
  return [
    ...messagesInsert(
      deps.db.sql,
      a.conversationId,
      [
        { role: "user", text: a.text },
        {
          role: "assistant",
          text: last.answer.user_facing_answer,
          meta: { runId: run.id, outcome: last.outcome, reasonCodes: last.reasonCodes },
        },
      ],
      run.id,
      { when },
    ),
    evidenceRunInsert(
      deps.db.sql,
      {
        runId: run.id,
        conversationId: a.conversationId,
        tenantId: a.tenantId,
        turn: last.turn,
        question: a.text,
        outcome: last.outcome,
        reasonCodes: last.reasonCodes,
        artifacts: {
          query_frame: w.frame,
          premises: w.scope?.premises ?? [],
          execution_plan: w.plan,
          tool_runs: w.toolRuns,
          evidence_bundle: w.bundle,
          coverage_report: w.coverage,
          final_answer_package: w.answer,
          // Every claim the answer could state this run, with its kind and provenance (the model chose from it).
          claims_menu: w.menu,
          validation: w.validation,
          rejected_answer: w.rejected,
          conversation_state: s.context.state,
          model_calls: t.modelCalls,
          stages: t.trace.records.map(({ stageId, name, status, durationMs }) => ({
            stageId,
            name,
            status,
            durationMs,
          })),
          // The readable debug view and the model outputs that were not used, retrievable after the request.
          debug_view: t.trace.records.find((x) => x.stageId === "10")?.data ?? null,
          rejected_model_outputs: t.rejected,
        },
      },
      when,
    ),
  ];
}

function turnClosing(t: TurnSide, a: EvidenceTurnArgs, s: Snapshot) {
  const run = a.run;
  const last = s.context.last!;
  // The tokens were the rendered answer itself (effects.ts streams only a resolved choice): `final` follows them.
  return [
    {
      event: "final" as const,
      data: {
        conversationId: a.conversationId,
        runId: run.id,
        turn: last.turn,
        outcome: last.outcome,
        reasonCodes: last.reasonCodes,
        answer: last.answer.user_facing_answer,
        package: last.answer,
        coverage: last.coverage,
        premises: t.notes.recorded?.work.scope?.premises ?? [],
        state: s.context.state,
        validation: last.validation ?? { ok: true, issues: [], citations: [] },
        modelCalls: t.modelCalls,
      },
    },
  ];
}
