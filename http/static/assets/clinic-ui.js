// Clinic pieces shared by the Sandbox and the Debug page: reply badges, guard blocks, the thread-state card.
import { el, json } from "./common.js";

export const HANDOFF_CAP = 3;

/** The escalation reasons as a patient's operator reads them (the Sandbox's badges, the inbox's list). */
export const reasonRu = {
  acute_pain: "острое состояние",
  surgery: "операция",
  angry: "раздражённый тон",
  explicit_request: "просьба пациента",
  routing_loop: "защита от петли",
};

/**
 * The events whose badge says the same every time: [tone, data-badge, text, and for some the
 * pattern of the debug notes that say what exactly was wrong, shown as the badge's tooltip].
 */
const eventBadges = {
  sticky: ["", "sticky", "удержались в ветке (sticky)"],
  soft_insertion: ["warn", "soft_insertion", "тип ответа: боковой вопрос"],
  handoff: ["warn", "handoff", "переключение ветки"],
  resumed: ["ok", "resumed", "возврат к отложенному сценарию"],
  transition_rejected: ["err", "rejected", "переход отклонён валидатором"],
  loop_guard: ["err", "loop_guard", "защита от петли"],
  held_by_operator: ["warn", "held", "диалог ведёт администратор: бот молчит, ответ придёт сюда"],
  model_unavailable: ["err", "model_unavailable", "модель недоступна"],
  red_flag: ["err", "red_flag", "экстренный ответ: признаки опасного состояния (103 / 112)"],
  tail_malformed: ["warn", "tail_malformed", "служебный хвост не разобран", /malformed|not understood/],
  signal_ignored: ["warn", "signal_ignored", "сигнал смены ветки проигнорирован", /ignored/],
};

/** Badges under an assistant reply, from its `final` (or a stored message's meta). */
export function replyBadges({ state, events, notes }) {
  const out = [];
  const ev = events ?? [];
  // A turn that began by keeping the branch (sticky) but ended in another one (a branch's own
  // signal, an escalation, the loop guard) did not stay: one badge for what happened, not both.
  const left = ev.some((e) => e === "handoff" || e === "resumed" || e === "escalated" || e === "loop_guard");
  if (state?.routerDecision)
    out.push(
      el("span", { class: "badge", dataset: { badge: "router" } }, `Решение маршрутизатора: ${state.routerDecision}`),
    );
  if (state?.activeBranch)
    out.push(
      el("span", { class: "badge gray", dataset: { badge: "branch" } }, `Активная ветка: ${state.activeBranch}`),
    );
  if (state?.step) out.push(el("span", { class: "badge gray", dataset: { badge: "step" } }, `Шаг: ${state.step}`));
  for (const e of ev) {
    if (e === "sticky" && left) continue;
    const fixed = Object.hasOwn(eventBadges, e) ? eventBadges[e] : undefined;
    if (fixed) {
      const [tone, badge, text, note] = fixed;
      const cls = tone ? `badge ${tone}` : "badge";
      out.push(el("span", { class: cls, dataset: { badge }, title: note && noteFor(notes, note) }, text));
    } else if (e === "escalated") {
      const r = state?.escalationReason;
      out.push(
        el(
          "span",
          { class: "badge err", dataset: { badge: "escalated" } },
          `Передача оператору · причина: ${r ?? "—"}${r && reasonRu[r] ? ` (${reasonRu[r]})` : ""}`,
        ),
      );
    } else if (e.startsWith("guard_blocked:"))
      out.push(el("span", { class: "badge err lock", dataset: { badge: "guard" } }, `защитное условие ${e.slice(14)}`));
    else out.push(el("span", { class: "badge gray" }, e));
  }
  return el("div", { class: "badges" }, out);
}

const noteFor = (notes, re) => (notes ?? []).filter((n) => re.test(n)).join("\n");

const filled = (v) => v !== null && v !== undefined && !(typeof v === "string" && v.trim() === "");

/** The guards that blocked this turn, with the slots they still wait for (from the step graph). */
export function guardBlocks(state, events, stepGraphs) {
  const names = (events ?? []).filter((e) => e.startsWith("guard_blocked:")).map((e) => e.slice(14));
  if (!names.length) return [];
  const graph = (stepGraphs ?? []).find((g) => g.branch === state?.activeBranch);
  const step = graph?.steps.find((s) => s.code === state?.step);
  return names.map((name) => {
    const g = step?.guards?.[name];
    const missing = g ? g.required_slots.filter((s) => !filled(state.slots?.[s])) : [];
    return el(
      "div",
      { class: "guard-block", dataset: { guard: name } },
      el("b", { class: "lock" }, `защитное условие ${name} не пройдено`),
      missing.length ? ` — ждём: ${missing.join(", ")}` : "",
      g?.description ? el("div", { class: "small" }, g.description) : null,
    );
  });
}

/** The "Состояние диалога" card. */
export function stateCard(state, lastEvents, stepGraphs) {
  if (!state) return el("div", { class: "muted" }, "Диалог ещё не начат.");
  const slots = Object.entries(state.slots ?? {});
  return el(
    "div",
    {},
    el(
      "div",
      { class: "kv" },
      el("div", {}, "Активная ветка"),
      el("div", { dataset: { field: "activeBranch" } }, state.activeBranch ?? "—"),
      el("div", {}, "Решение маршрутизатора"),
      el("div", { dataset: { field: "routerDecision" } }, state.routerDecision ?? "—"),
      el("div", {}, "Шаг"),
      el("div", { dataset: { field: "step" } }, state.step ?? "—"),
      el("div", {}, "Переключения"),
      el("div", { dataset: { field: "handoffs" } }, `Переключений: ${state.handoffCount} из ${HANDOFF_CAP}`),
      el("div", {}, "Боковых подряд"),
      el("div", {}, String(state.softInsertionCount ?? 0)),
      el("div", {}, "Отложенный сценарий"),
      el(
        "div",
        { dataset: { field: "suspended" } },
        state.suspended
          ? `${state.suspended.intent} · шаг ${state.suspended.step ?? "—"} · слоты: ${Object.keys(state.suspended.slots ?? {}).join(", ") || "—"}`
          : "—",
      ),
      el("div", {}, "Причина передачи"),
      el("div", {}, state.escalationReason ?? "—"),
    ),
    el("h3", {}, "Слоты"),
    slots.length
      ? el(
          "table",
          { dataset: { field: "slots" } },
          slots.map(([k, v]) =>
            el("tr", {}, el("td", { class: "mono" }, k), el("td", {}, typeof v === "string" ? v : json(v))),
          ),
        )
      : el("div", { class: "muted small" }, "Слоты пока пусты."),
    guardBlocks(state, lastEvents, stepGraphs),
  );
}

/** The RAG fragments and the assembled system prompt of one run, from its debug `stage` events. */
export function debugDetails(stages) {
  const frags = stages.filter((s) => s.name === "documentation").flatMap((s) => s.data?.fragments ?? []);
  const prompts = stages.filter((s) => s.name === "prompt-manifest" && s.data?.system);
  const out = [];
  if (frags.length)
    out.push(
      el(
        "details",
        { dataset: { detail: "rag" } },
        el("summary", {}, `RAG-фрагменты (${frags.length})`),
        frags.map((f) =>
          el(
            "div",
            {},
            el("b", {}, `${f.docId} · ${f.heading ?? f.title ?? ""}`),
            el("span", { class: "muted" }, ` · ${Number(f.score ?? 0).toFixed(3)}`),
            el("pre", {}, f.text),
          ),
        ),
      ),
    );
  for (const p of prompts)
    out.push(
      el(
        "details",
        { dataset: { detail: "prompt" } },
        el("summary", {}, `Системный промпт · ${p.data.branch}${prompts.length > 1 ? ` (вызов ${p.data.call})` : ""}`),
        el("pre", {}, p.data.system),
      ),
    );
  return out;
}
