import { isStepped, stepSpec } from "./registry";
import { routerSystemPrompt } from "./seed-router";
import type { BranchCode, ClinicState, Registry, StepSpec } from "./types";
import { branchCodes, escalationReasons, SOFT_INSERTION_LIMIT } from "./types";

/** Prompt template identities; bump the version whenever the wording below changes. */
export const ROUTER_PROMPT = { id: "clinic.router", version: 1 } as const;
export const BRANCH_PROMPT = { id: "clinic.branch", version: 1 } as const;

export interface KnowledgeFragment {
  docId: string;
  title: string;
  text: string;
  score: number;
}

export interface HistoryMessage {
  role: "user" | "assistant";
  text: string;
}

export type PromptMessage = { role: "system" | "user" | "assistant"; content: string };

/** The router sees a short system prompt and the recent history only (seed 003, step 1). */
export function buildRouterMessages(
  history: HistoryMessage[],
  text: string,
  keep = 6,
  system = routerSystemPrompt(),
): PromptMessage[] {
  return [
    // The active version of the `_router` system branch (Настройки); the seed's prompt by default.
    { role: "system", content: system },
    ...history.slice(-keep).map((m) => ({ role: m.role, content: m.text })),
    { role: "user", content: text },
  ];
}

export function routerHintBlock(decision: BranchCode, active: BranchCode): string {
  const signal =
    decision === "escalate_human" ? `[INTENT_CHANGE: escalate_human|<причина>]` : `[INTENT_CHANGE: ${decision}]`;
  return [
    "[ПОДСКАЗКА РОУТЕРА]",
    `Маршрутизатор счёл, что тема — \`${decision}\`.`,
    `Ты ведёшь сценарий \`${active}\`.`,
    `Если пациент сменил тему — выдай ${signal}.`,
    "Если реплика в сценарии — зафиксируй в слот и продолжай.",
  ].join("\n");
}

export const HARD_RETURN_PHRASE = "верни пациента к вопросу текущего шага";

export function hardReturnBlock(question: string, count: number): string {
  return [
    "[ВОЗВРАТ К СЦЕНАРИЮ]",
    `Боковых вопросов подряд: ${count}. Ответь на вопрос одной фразой и обязательно ${HARD_RETURN_PHRASE}${question ? `: «${question}»` : ""}.`,
  ].join("\n");
}

export function stateBlock(state: ClinicState): string {
  const lines = ["[СОСТОЯНИЕ ДИАЛОГА]", `Ветка: ${state.activeBranch ?? "—"}`];
  if (state.step !== null) {
    lines.push(`Шаг: ${state.step}`);
    lines.push(`Слоты: ${JSON.stringify(state.slots)}`);
    lines.push(`Боковых вопросов подряд: ${state.softInsertionCount}`);
  }
  return lines.join("\n");
}

/** The answer format: fixed by the branch, the step and whether an escalation's reason is known yet. */
function tailInstructions(reg: Registry, step: string | null, branch: BranchCode, reasonKnown: boolean): string {
  const signals =
    `Если сработало условие выхода — вместо ответа выдай только сигнал [INTENT_CHANGE: <код_ветки>] ` +
    `или [INTENT_CHANGE: escalate_human|<причина>]; причины: ${escalationReasons.filter((r) => r !== "routing_loop").join(", ")}. ` +
    `Коды веток: ${branchCodes.join(", ")}.`;
  const spec = stepSpec(reg, branch, step);
  if (isStepped(reg, branch) && spec) {
    return [
      "[ФОРМАТ ОТВЕТА]",
      "Сначала текст для пациента. Затем последней строкой служебный хвост (пациент его не увидит):",
      'STATE_JSON: {"state_after": "<код шага>", "slots_updated": {…}, "soft_insertion": false}',
      `state_after — текущий шаг (${spec.code}) или один из допустимых переходов: ${spec.allowed_next.join(", ")}.`,
      "slots_updated — только новые или изменённые слоты (name, reason, specialist, preferred_time, confirmed, is_child, legal_rep_name, legal_rep_phone).",
      "soft_insertion: true — если ты ответил на боковой вопрос, не продвинув сценарий (state_after — текущий шаг, slots_updated — {}).",
      signals,
    ].join("\n");
  }
  if (branch === "escalate_human" && !reasonKnown) {
    return [
      "[ФОРМАТ ОТВЕТА]",
      `Ответь пациенту, затем последней строкой: STATE_JSON: {"escalation_reason": "<причина>"}; причины: ${escalationReasons.filter((r) => r !== "routing_loop").join(", ")}.`,
    ].join("\n");
  }
  return ["[ФОРМАТ ОТВЕТА]", "Ответь пациенту обычным текстом.", signals].join("\n");
}

export interface BranchPromptInput {
  registry: Registry;
  state: ClinicState;
  /** The router's differing decision when the stepped branch holds the dialogue (sticky). */
  hint: BranchCode | null;
  fragments: KnowledgeFragment[];
}

/** Base prompt + rules + exit conditions + step prompt + state block + hint + hard return + knowledge (seed 003, step 5). */
/**
 * The parts of a branch's prompt the settings and the step fix — the branch's text, rules and
 * exit conditions, the step's block, the answer format — the same text on every turn at that
 * step (and, in escalate_human, as long as the reason stays unknown or known): built once per registry (a registry is built from one set of settings versions and never
 * changes; an edit builds a new one).
 */
interface FixedParts {
  head: string[];
  spec: StepSpec | undefined;
  tail: string;
}
const fixedParts = new WeakMap<Registry, Map<string, FixedParts>>();

function fixedFor(registry: Registry, branch: BranchCode, step: string | null, reasonKnown: boolean): FixedParts {
  let byStep = fixedParts.get(registry);
  if (!byStep) fixedParts.set(registry, (byStep = new Map()));
  const key = `${branch}\u0000${step ?? ""}\u0000${reasonKnown}`;
  let fixed = byStep.get(key);
  if (fixed) return fixed;
  const cfg = registry.branches[branch];
  const head = [cfg.system_prompt];
  if (cfg.rules.length) head.push(["[ПРАВИЛА]", ...cfg.rules.map((r) => `- ${r}`)].join("\n"));
  if (cfg.exit_conditions.length)
    head.push(["[УСЛОВИЯ ВЫХОДА]", ...cfg.exit_conditions.map((r) => `- ${r}`)].join("\n"));
  const spec = stepSpec(registry, branch, step);
  if (spec) {
    const guards = Object.entries(spec.guards).map(
      ([name, g]) => `- ${name}: ${g.description} (нужны: ${g.required_slots.join(", ")})`,
    );
    head.push(
      [
        `[ШАГ: ${spec.code}${spec.title ? ` — ${spec.title}` : ""}]`,
        spec.prompt,
        ...(spec.question ? [`Вопрос шага: ${spec.question}`] : []),
        ...(guards.length ? ["Защитные условия:", ...guards] : []),
      ].join("\n"),
    );
  }
  fixed = { head, spec, tail: tailInstructions(registry, step, branch, reasonKnown) };
  byStep.set(key, fixed);
  return fixed;
}

export function buildBranchSystemPrompt({ registry, state, hint, fragments }: BranchPromptInput): string {
  const branch = state.activeBranch;
  if (branch === null) throw new Error("buildBranchSystemPrompt: no active branch");
  const { head, spec, tail } = fixedFor(registry, branch, state.step, state.escalationReason !== null);
  const parts = [...head];
  parts.push(stateBlock(state));
  if (hint !== null && hint !== branch) parts.push(routerHintBlock(hint, branch));
  if (spec && state.softInsertionCount >= SOFT_INSERTION_LIMIT)
    parts.push(hardReturnBlock(spec.question, state.softInsertionCount));
  if (fragments.length)
    parts.push(
      [
        "[БАЗА ЗНАНИЙ]",
        "Отвечай только по этим фрагментам; если ответа в них нет — так и скажи.",
        ...fragments.map((f, i) => `(${i + 1}) ${f.title}: ${f.text}`),
      ].join("\n"),
    );
  parts.push(tail);
  return parts.join("\n\n");
}

export function buildBranchMessages(
  system: string,
  history: HistoryMessage[],
  text: string,
  keep = 12,
): PromptMessage[] {
  return [
    { role: "system", content: system },
    ...history.slice(-keep).map((m) => ({ role: m.role, content: m.text })),
    { role: "user", content: text },
  ];
}

export { routerSystemPrompt };
