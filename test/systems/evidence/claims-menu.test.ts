// The claims menu and the choice over it, pure: derived claims computed by the engine with their
// provenance, the direct question's claim in the engine's «Коротко», and the refusals — an unknown
// id, a foreign block, a text that is not fact-free — with the mandatory claims always shown.
import { describe, expect, it } from "vitest";
import { packageOf, resolveChoice } from "../../../systems/evidence/answer-choice";
import { factFreeIssues } from "../../../systems/evidence/free-text";
import { composeMenu } from "../../../systems/evidence/compose";
import type { ClaimsMenu } from "../../../systems/evidence/claims-menu";
import { chainWorld, settlementsWorld, toolingFailedWorld } from "./worlds";

const menuOf = (w: ReturnType<typeof settlementsWorld>, question = "") => composeMenu({ ...w.input, question });
const of = (m: ClaimsMenu, kind: string, subject?: string) =>
  m.claims.filter((c) => c.kind === kind && (!subject || c.subject === subject));

describe("the claims menu", () => {
  const w = settlementsWorld();
  const m = menuOf(w);

  it("derives totals, counts and due dates over named facts, with their provenance", () => {
    const debts = w.bundle.facts.filter((f) => f.type === "open_balance" && (f.value as number) > 0);
    const [total] = of(m, "total", "suppliers");
    expect(total!.facts.sort()).toEqual(debts.map((f) => f.fact_id).sort());
    // 120 000 + 150 000 + 95 000 — the advance (−30 000) is not our debt
    expect(total!.text).toMatch(/^Всего наш долг перед поставщиками: 365 000,00 ₽ \(3: /);
    expect(of(m, "count", "suppliers")[0]!.text).toMatch(/: 3 \[F/);
    expect(of(m, "total", "advances")[0]!.text).toMatch(/30 000,00 ₽/);
    // one dated party: its own term, said expired since it lies before the as-of date
    expect(of(m, "earliest_due")[0]!.text).toMatch(/ООО «Альфа-Снаб» истёк 15\.02\.2026/);
    expect(of(m, "overdue_part")[0]!.text).toMatch(/просроченная часть долга — 45 000,00 ₽ из 120 000,00 ₽/);
    expect(of(m, "difference", "overdue")[0]!.text).toMatch(/не просрочено 75 000,00 ₽/);
    // every claim that states a figure cites the facts it was computed from
    for (const c of m.claims.filter((x) => /\d,\d\d ₽/.test(x.text) && x.kind !== "conclusion"))
      expect(c.facts.length, c.text).toBeGreaterThan(0);
  });

  it("puts the claim a direct question asks for in the engine's «Коротко»", () => {
    const kindIn = (q: string, world = w) => {
      const menu = menuOf(world, q);
      return menu.engine.short.slice(1).map((id) => menu.claims.find((c) => c.id === id)!);
    };
    expect(kindIn("Сколько всего мы должны поставщикам?").map((c) => [c.kind, c.subject])).toEqual([
      ["total", "suppliers"],
    ]);
    expect(kindIn("До какого числа надо было заплатить?").map((c) => c.kind)).toEqual(["earliest_due"]);
    expect(kindIn("Сколько поставщиков с авансом?").map((c) => [c.kind, c.subject])).toEqual([["count", "advances"]]);
    expect(kindIn("Сколько документов не оплачено?", chainWorld()).map((c) => [c.kind, c.subject])).toEqual([
      ["count", "documents"],
    ]);
    expect(kindIn("Какие хвосты по поставщикам?")).toEqual([]);
  });

  it("gaps after a tool fault are mandatory; «nothing to clarify» only when there is no next step", () => {
    const failed = menuOf(toolingFailedWorld());
    expect(of(failed, "gap").length).toBeGreaterThan(0);
    expect(of(failed, "gap").every((c) => c.mandatory === "not_established")).toBe(true);
    expect(of(failed, "nothing_to_clarify")).toEqual([]);
    expect(of(failed, "conclusion")[0]!.mandatory).toBe("short");
  });
});

describe("the model's choice over the menu", () => {
  const m = menuOf(settlementsWorld());
  const engine = { ...m.engine };

  it("renders the engine's own choice as the composed draft", () => {
    const r = resolveChoice(m, engine);
    expect(r.issues).toEqual([]);
    expect(packageOf(r, null, "deterministic").user_facing_answer).toBe(settlementsWorld().draft.user_facing_answer);
  });

  it("refuses unknown ids, foreign blocks and repeats, and adds what is mandatory", () => {
    const conclusion = of(m, "conclusion")[0]!.id;
    const balance = of(m, "open_balance")[0]!.id;
    const r = resolveChoice(m, {
      ...engine,
      short: [],
      found: [conclusion, balance, balance, "C999"],
      next_step: [balance],
    });
    expect(r.issues.join("\n")).toMatch(/\(conclusion\) не может стоять в этом блоке/);
    expect(r.issues.join("\n")).toMatch(/уже выбрано — повтор отброшен/);
    expect(r.issues.join("\n")).toMatch(/«C999» нет в меню/);
    expect(r.blocks.short[0]!.id).toBe(conclusion);
    expect(r.blocks.next_step.map((c) => c.id)).not.toContain(balance);
    expect(r.blocks.found.filter((c) => c.id === balance)).toHaveLength(1);
  });

  it("shows only fact-free free text", () => {
    for (const ok of ["Здравствуйте! Вот результаты проверки.", "Если будут вопросы — обращайтесь."])
      expect(factFreeIssues(ok), ok).toEqual([]);
    for (const lie of [
      "Итого 365 000 ₽.",
      "Долгов нет.",
      "ООО «Альфа-Снаб» должен нам.",
      "Сто двадцать тысяч или меньше",
      "~~Здравствуйте~~",
      "В марте всё оплачено",
      "Вероятно, всё закрыто",
      "Аванс — это наш долг",
    ])
      expect(factFreeIssues(lie), lie).not.toEqual([]);
  });
});
