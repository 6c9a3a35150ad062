// The Evidence workflow over real HTTP for tests: a server with the scripted model, the demo MCP
// server it serves itself, extra demo MCP servers with faults or rewritten data, and the calls a
// client makes (open a conversation, ask with a script, read the run's artifacts).
import { serve, type ServerType } from "@hono/node-server";
import { expect } from "vitest";
import { evidenceMcpHttpHandler, type Faults } from "../../systems/evidence/mcp-server/server";
import { closeEvidenceMcp, useEvidenceMcp } from "../../systems/evidence/routes";
import type { Database } from "../../storage/db";
import { startScriptedLlm, type ScriptedLlm, type ScriptStep } from "./scripted-llm";
import { startTestServer } from "./server";
import { eventsNamed, postSse, type SseResponse } from "./sse";

export const EVIDENCE_AUTH = { authorization: "Bearer tok-a" };

export interface EvidenceFinal {
  conversationId: string;
  runId: string;
  outcome: string;
  reasonCodes: string[];
  answer: string;
  premises: { kind: string; key: string; status: string; source: string; value: string }[];
  package: { blocks: { direct: string; not_established: string[]; next_step: string[] }; composed_by: string };
  coverage: {
    critic: { model: string; note: string | null };
    uncovered_points: string[];
    next_best_actions: string[];
    mandatory?: { not_established: string[]; next_step: string[] };
  };
  validation: { ok: boolean; issues: string[] } | null;
}

export interface Asked {
  r: SseResponse;
  final: EvidenceFinal;
  /** What the client was sent as `token`s, joined. */
  tokens: string;
}

export interface EvidenceApi {
  llm: ScriptedLlm;
  url: string;
  /** A demo MCP server on its own port with these faults (or rewritten answers). */
  serveMcp(faults: Faults): Promise<string>;
  /** Point the workflow at that server until `restore()`. */
  useMcp(url: string): Promise<void>;
  restore(): Promise<void>;
  conversation(): Promise<string>;
  ask(id: string, text: string, script?: { planner?: ScriptStep[]; answer?: ScriptStep[] }): Promise<Asked>;
  artifacts(runId: string): Promise<Record<string, any>>;
  stop(): Promise<void>;
}

export async function startEvidenceApi(db: Database): Promise<EvidenceApi> {
  const llm = await startScriptedLlm();
  const app = await startTestServer({ db, llm, tokens: "a:tok-a" });
  const own = { endpoint: { kind: "http" as const, url: `${app.url}/v1/evidence/mcp`, headers: EVIDENCE_AUTH } };
  await useEvidenceMcp(app.deps, own);
  const extra: ServerType[] = [];
  const api: EvidenceApi = {
    llm,
    url: app.url,
    serveMcp: (faults) =>
      new Promise<string>((resolve) => {
        const handler = evidenceMcpHttpHandler(db.sql, faults);
        extra.push(
          serve({ fetch: handler, port: 0, hostname: "127.0.0.1" }, (i) => resolve(`http://127.0.0.1:${i.port}/mcp`)),
        );
      }),
    useMcp: async (url) => void (await useEvidenceMcp(app.deps, { endpoint: { kind: "http", url } })),
    restore: async () => void (await useEvidenceMcp(app.deps, own)),
    async conversation() {
      const r = await fetch(`${app.url}/v1/evidence/conversations`, { method: "POST", headers: EVIDENCE_AUTH });
      expect(r.status).toBe(201);
      return ((await r.json()) as { conversationId: string }).conversationId;
    },
    async ask(id, text, script = {}) {
      llm.reset();
      if (script.planner?.length) llm.script("planner", ...script.planner);
      if (script.answer?.length) llm.script("answer", ...script.answer);
      const r = await postSse(`${app.url}/v1/evidence/conversations/${id}/messages`, { text }, EVIDENCE_AUTH);
      expect(eventsNamed(r, "error")).toEqual([]);
      const final = eventsNamed(r, "final")[0] as unknown as EvidenceFinal;
      const tokens = eventsNamed(r, "token")
        .map((e) => e.delta)
        .join("");
      return { r, final, tokens };
    },
    async artifacts(runId) {
      const r = await fetch(`${app.url}/v1/evidence/runs/${runId}`, { headers: EVIDENCE_AUTH });
      return ((await r.json()) as { artifacts: Record<string, any> }).artifacts;
    },
    async stop() {
      await closeEvidenceMcp(app.deps).catch(() => {});
      await app.stop();
      await llm.close();
      for (const s of extra)
        await new Promise<void>(
          (r) => (s.close(() => r()), (s as { closeAllConnections?: () => void }).closeAllConnections?.()),
        );
    },
  };
  return api;
}

/** The seed question as an interpreter model restates it. */
export const SUPPLIERS_QUESTION = "Определить поставщиков с незакрытыми расчётами на дату отсечения";

/** An interpreter reply shaped like a real model's QueryFrame. */
export function interpreterReply(o: {
  intent: string;
  counterparty?: string;
  date?: string;
  reading?: string;
  question?: string;
  /** The answer shape the model proposes (default: a list for the detect intent, else one value). */
  shape?: string;
  /** Suppliers named as a group (always so with the detect intent). */
  group?: boolean;
  /** The model finds «хвосты» undefined, blocking. */
  blocking?: boolean;
}): string {
  const detect = o.intent === "detect_open_supplier_settlements";
  return JSON.stringify({
    normalized_question: o.question ?? "Вопрос о расчётах",
    business_intent: o.intent,
    expected_answer_shape: o.shape ?? (detect ? "list_with_explanation" : "single_value"),
    domain_candidates: ["supplier_settlements"],
    time_scope: { explicit_period: null, as_of_date: null, surface: o.date ?? null, needs_resolution: true },
    entity_candidates: [
      ...(detect || o.group ? [{ surface: "поставщики", type: "counterparty_group", confidence: 0.95 }] : []),
      ...(o.counterparty ? [{ surface: o.counterparty, type: "counterparty", confidence: 0.9 }] : []),
    ],
    business_terms: detect ? [{ surface: "хвосты", reading: o.reading ?? null, explicit: !!o.reading }] : [],
    ambiguities: o.blocking ? [{ kind: "term", text: "Не определено, что считать «хвостами»", blocking: true }] : [],
    success_criteria: [],
  });
}

/** A critic reply in the point-list form with nothing to add. */
export const NO_CRITIC_POINTS = JSON.stringify({
  covered_points: [],
  uncovered_points: [],
  extra_reasons: [],
  next_best_actions: [],
});

/** A critic reply in the closed set (prompt version 3) with nothing to add. */
export const EMPTY_CRITIQUE = JSON.stringify({ gaps: [], actions: [] });

/** A step of a model-written plan (the planner role's reply): required, no dependencies, its tool as its purpose unless `extra` says otherwise. */
export const planStep = (
  id: string,
  tool: string,
  input: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) => ({
  step_id: id,
  type: tool,
  tool,
  input,
  required: true,
  depends_on: [],
  for_each: null,
  filter: null,
  purpose: tool,
  ...extra,
});
