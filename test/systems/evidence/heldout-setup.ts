// Set-up shared by the held-out probes of issue 42 (heldout-*.test.ts): one server with the
// scripted model and the demo MCP server per file, a fresh conversation per probe, and readers
// for what the user sees (the «Коротко» line, a block's lines) and what engineers see (the run's
// artifacts). The probes were written from seed 002 and the issue, against the demo base's data
// (systems/evidence/mcp-server/demo-data.ts) worked out by hand: on 31.03.2026 we owe
// АО «ТехноПоставка» 150 000, ООО «Альфа-Снаб» 95 000 (overdue since 29.03), ООО «Вектор» 60 000
// (overdue since 25.03; its payment № 466 is entered, not posted), ИП Смирнов holds our 30 000
// advance, receipt № 55 has no invoice.
import { afterAll, beforeAll, expect } from "vitest";
import { seedDemoData } from "../../../systems/evidence/mcp-server/demo-data";
import { useTestDatabase } from "../../utils/db";
import {
  EMPTY_CRITIQUE,
  interpreterReply,
  startEvidenceApi,
  type Asked,
  type EvidenceApi,
} from "../../utils/evidence-api";
import type { ScriptStep } from "../../utils/scripted-llm";
import { eventsNamed } from "../../utils/sse";
import { replyTo, type AnswerPrompt } from "./menu-choice";

export const DETECT = "detect_open_supplier_settlements";
export const BALANCE = "counterparty_balance";
export const UNCLOSED = "unclosed_documents";
export { EMPTY_CRITIQUE };

/** A server for this file; call at the top level of a test file. */
export function useHeldout(): { readonly api: EvidenceApi } {
  const t = useTestDatabase();
  let api: EvidenceApi | undefined;
  beforeAll(async () => {
    api = await startEvidenceApi(t.db);
    // the demo base is loaded on first use; a probe may first reach an extra server of its own
    await seedDemoData(t.db.sql);
  }, 120_000);
  afterAll(async () => api?.stop());
  return {
    get api() {
      return api!;
    },
  };
}

export interface Probe {
  intent?: string;
  counterparty?: string;
  /** The date the interpreter model read (defaults to the first dd.mm.yyyy of the question). */
  date?: string | null;
  reading?: string;
  /** The planner's reply; default: two broken replies, so the built-in plan runs. */
  plan?: string[];
  /** The critic's reply (text, or written after reading its prompt); default: nothing to add. */
  critic?: ScriptStep;
  answer?: ScriptStep[];
}

/** Ask `text` in a new conversation (or `conversation`), with a scripted interpreter, planner and critic. */
export async function probe(api: EvidenceApi, text: string, o: Probe = {}, conversation?: string): Promise<Asked> {
  const id = conversation ?? (await api.conversation());
  const date = o.date === null ? undefined : (o.date ?? text.match(/\d\d\.\d\d\.\d{4}/)?.[0]);
  const planner: ScriptStep[] = [
    interpreterReply({
      intent: o.intent ?? DETECT,
      counterparty: o.counterparty,
      date,
      reading: o.reading ?? ((o.intent ?? DETECT) === DETECT ? "open_settlement_balance" : undefined),
    }),
    ...(o.plan ?? ["{}", "{}"]),
    o.critic ?? EMPTY_CRITIQUE,
  ];
  const asked = await api.ask(id, text, { planner, answer: o.answer });
  // One answer: what streamed is what was stored, nothing replaced it.
  expect(eventsNamed(asked.r, "answer_replaced")).toEqual([]);
  expect(asked.tokens).toBe(asked.final.answer);
  return asked;
}

type Choice = Partial<Record<"short" | "checked" | "found" | "not_established" | "next_step", string[]>> & {
  opening?: string | null;
  closing?: string | null;
  [extra: string]: unknown;
};
/** A model that mostly agrees with the engine's choice and changes part of it (read from the real prompt). */
export const modelChoice = (change: (p: AnswerPrompt) => Choice): ScriptStep =>
  replyTo((p) => ({ opening: null, closing: null, ...p.engine_choice, ...change(p) }));

const HEAD = /^\*\*(Коротко|Что проверено|Что найдено|Что не удалось установить|Что уточнить \/ следующий шаг)\.\*\*/;
/** The text of one block of the rendered answer («Коротко» is one paragraph, the others are lines). */
export function block(answer: string, name: string): string {
  const out: string[] = [];
  let inside = false;
  for (const line of answer.split("\n")) {
    const h = line.match(HEAD);
    if (h) inside = h[1] === name;
    if (inside) out.push(h ? line.slice(h[0].length).trim() : line);
  }
  return out.join("\n").trim();
}
export const shortOf = (a: Asked) => block(a.final.answer, "Коротко");

/** Claims of the run's menu (kind, subject, text, provenance), read from GET /v1/evidence/runs/{id}. */
export async function menuOf(api: EvidenceApi, a: Asked) {
  const art = await api.artifacts(a.final.runId);
  return art.claims_menu.claims as { id: string; kind: string; subject?: string; text: string; facts: string[] }[];
}

/** Everything the user or a model could read of a run: the answer, the stream, the package, the coverage. */
export const shown = (a: Asked) =>
  [a.final.answer, a.tokens, JSON.stringify(a.final.package), JSON.stringify(a.final.coverage)].join("\n");
