import { describe, expect, it } from "vitest";
import { composeAnswer } from "../../../systems/evidence/compose";
import { ruleCoverage } from "../../../systems/evidence/critic-rules";
import { buildEvidence } from "../../../systems/evidence/evidence-builder";
import {
  checkAnswer,
  conclusionsOf,
  createClaimChecker,
  nameKey,
  parseAmounts,
  parseCounts,
  parseDates,
} from "../../../systems/evidence/claim-check";
import { dateOut, plan, scope, settlementRow, toolRun } from "./fixtures";

const P = plan([
  ["S1", "resolve_counterparty", false],
  ["S2", "resolve_period_or_asof", true],
  ["S4", "get_open_supplier_settlements", true],
]);

function world(runs: ReturnType<typeof toolRun>[], s = scope()) {
  const bundle = buildEvidence("r1", P, runs, []);
  const { coverage, clarifying_question } = ruleCoverage({
    requestId: "r1",
    frame: null,
    scope: s,
    plan: P,
    toolRuns: runs,
    bundle,
  });
  const draft = composeAnswer({ scope: s, coverage, bundle, toolRuns: runs, clarifying_question, offline: false });
  const checker = createClaimChecker({ bundle, coverage, outcome: coverage.outcome, frame: null, draft });
  return { bundle, coverage, draft, checker, sentence: (t: string) => checker.sentence(t) };
}

const rows = [
  settlementRow("cp-alfa-snab", "ООО «Альфа-Снаб»", 120000),
  settlementRow("cp-technopostavka", "АО «ТехноПоставка»", 150000),
  settlementRow("cp-logistik", "ООО «Логистик Плюс»", 95000),
  settlementRow("cp-smirnov", "ИП Смирнов Андрей Викторович", -30000),
];
const romashka = toolRun(
  "S1",
  "resolve_counterparty",
  "success",
  {
    status: "ok",
    note: "",
    counterparty_id: "cp-romashka",
    candidates: [
      { counterparty_id: "cp-romashka", name: "ООО «Ромашка»", inn: "7706789012", roles: ["customer"], score: 1 },
    ],
  },
  { input: { query: "Ромашка" } },
);
const full = () =>
  world([
    romashka,
    toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
    toolRun("S4", "get_open_supplier_settlements", "success", {
      status: "ok",
      note: "",
      as_of_date: "2026-03-31",
      movements_scanned: 9,
      rows,
    }),
  ]);
const fid = (w: ReturnType<typeof full>, name: string) =>
  w.bundle.facts.find((f) => f.type === "open_balance" && f.entity.includes(name))!.fact_id;

describe("claim parsing", () => {
  it("reads amounts in any writing, and not dates, ids, document or contract numbers", () => {
    expect(
      parseAmounts("остаток 150 000,00 ₽ [F2] по договору П-12/2025, № 466 от 25.03.2026").map((a) => a.value),
    ).toEqual([150000]);
    expect(parseAmounts("долг 2050 ₽").map((a) => a.value)).toEqual([2050]);
    expect(parseAmounts("итого 2050").map((a) => a.value)).toEqual([2050]); // no year exemption for a bare figure
    expect(parseAmounts("около 950 тыс. руб. и 1,2 млн ₽").map((a) => [a.value, a.tolerance])).toEqual([
      [950000, 500],
      [1200000, 50000],
    ]);
    expect(parseAmounts("в 2026 году, 7 поставщиков")).toEqual([]);
    expect(parseAmounts("ООО «Альфа-Снаб» (ИНН 7701234567)")).toEqual([]);
    expect(parseDates("на 10.04.2026 г., 31 марта и в 2050 г.").map((d) => d.iso)).toEqual([
      "2026-04-10",
      "????-03-31",
      "2050",
    ]);
  });
  it("reads counts in digits and words, and names through case, quotes, legal form and declension", () => {
    expect(
      parseCounts("у 7 поставщиков, у трёх контрагентов, ни одного поставщика, перед поставщиками (3), оплат: 2").map(
        (c) => [c.noun, c.n],
      ),
    ).toEqual([
      ["party", 7],
      ["party", 3],
      ["party", 0],
      ["party", 3],
      ["payment", 2],
    ]);
    expect(nameKey("ООО «Альфа-Снаб»")).toEqual(["альфа", "снаб"]);
    const w = full();
    expect(w.sentence("По Альфа-Снабу остаток 120 000 ₽.")).toEqual([]);
    expect(w.sentence("У ТЕХНОПОСТАВКИ долг 150 000,00 ₽.")).toEqual([]);
  });
  it("tells conclusions from hedges", () => {
    expect(conclusionsOf("Хвостов по поставщикам нет — все расчёты закрыты.")).toEqual(["negative"]);
    expect(conclusionsOf("За период нет записей — это не означает, что долгов нет.")).toEqual([]);
    expect(conclusionsOf("Не удалось установить, есть ли хвосты; долгов нет.")).toEqual(["negative"]);
    expect(conclusionsOf("Остатки по двум поставщикам не закрыты.")).toEqual([]);
    expect(conclusionsOf("Ответ полный.")).toEqual(["complete"]);
    expect(conclusionsOf("К поступлению № 55 нет счёта-фактуры.")).toEqual([]);
  });
});

describe("claim checker on a fully answered run", () => {
  const w = full();
  it("passes the composed answer and correct model prose (the checker does not reject everything)", () => {
    expect(w.coverage.outcome).toBe("FULLY_ANSWERED");
    expect(checkAnswer(w.draft.user_facing_answer, w.checker)).toMatchObject({ ok: true, issues: [] });
    for (const s of [
      `У АО «ТехноПоставка» остаток 150 000,00 ₽ [${fid(w, "Техно")}], у ООО «Альфа-Снаб» — 120 000,00 ₽ [${fid(w, "Альфа")}].`,
      "На 31.03.2026 долг есть перед тремя поставщиками на 365 000,00 ₽.",
      "Крупнейший долг — перед ТехноПоставкой, около 150 тыс. ₽.",
      "ИП Смирнову выдан аванс 30 000 ₽.",
      "Ответ полный: проверены все остатки регистра.",
    ])
      expect([s, w.sentence(s)]).toEqual([s, []]);
  });
  it("rejects a real amount and fact id moved to another party, a customer or an invented one", () => {
    const moved = w.sentence(`ООО «Логистик Плюс»: остаток 150 000,00 ₽ [${fid(w, "Техно")}].`);
    expect(moved.join()).toMatch(/не относится к ООО «Логистик Плюс»/);
    expect(moved.join()).toMatch(/относится к АО «ТехноПоставка»/);
    expect(w.sentence(`ООО «Ромашка»: наш долг 150 000,00 ₽ [${fid(w, "Техно")}].`).join()).toMatch(
      /покупатель, а не поставщик/,
    );
    expect(w.sentence("ООО «Бета-Сервис» должны 2050 ₽.").join()).toMatch(/ООО «Бета-Сервис» отсутствует в данных/);
    expect(w.sentence("Ещё висит долг 2050 ₽.").join()).toMatch(/2 050 ₽ не подтверждена/);
    expect(w.sentence("Поставщику «Гамма» должны 120 000 ₽.").join()).toMatch(/«Гамма» отсутствует/);
  });
  it("rejects inflated counts, rounded figures that do not match, foreign dates and years", () => {
    const inflated = w.sentence("Хвосты у 7 поставщиков на общую сумму 950 тыс. ₽.").join("|");
    expect(inflated).toMatch(/«7 поставщиков»: в данных проверки 3/);
    expect(inflated).toMatch(/сумма 950 000 ₽ не подтверждена/);
    expect(w.sentence("Долг перед пятью контрагентами.").join()).toMatch(/пятью контрагентами/);
    expect(w.sentence("Альфа-Снабу должны 1,2 млн ₽.").join()).toMatch(/1 200 000 ₽ не относится/);
    expect(w.sentence("Данные на 15.05.2026.").join()).toMatch(/дата «15\.05\.2026»/);
    expect(w.sentence("Так было и в 2050 г.").join()).toMatch(/год «2050 г\.»/);
    expect(w.sentence("Ссылка [F99].").join()).toMatch(/F99/);
  });
  it("rejects «всё закрыто» while balances are open, and «долга нет» for a party with a balance", () => {
    expect(w.sentence("Все расчёты с поставщиками закрыты.").join()).toMatch(/есть незакрытые остатки/);
    expect(w.sentence("По Альфа-Снабу долга нет.").join()).toMatch(/по ООО «Альфа-Снаб» не подтверждён/);
  });
});

describe("claim checker against the outcome class", () => {
  it("BLOCKED_BY_TOOLING: no negative or complete conclusion", () => {
    const w = world([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "timeout", null, {
        error_code: "MCP_TIMEOUT",
        error_message: "Request timed out",
      }),
    ]);
    expect(w.coverage.outcome).toBe("BLOCKED_BY_TOOLING");
    expect(w.sentence("Хвостов по поставщикам нет — все расчёты закрыты.").join()).toMatch(
      /не допускается: инструмент не отработал/,
    );
    expect(w.sentence("Незакрытых остатков не обнаружено.").length).toBeGreaterThan(0);
    expect(w.sentence("Проверка полностью завершена.").length).toBeGreaterThan(0);
    expect(w.sentence("Не удалось получить данные из учётной системы, поэтому ответа по существу нет.")).toEqual([]);
    expect(checkAnswer(w.draft.user_facing_answer, w.checker).ok).toBe(true);
  });
  it("an empty register on a fully answered run allows «хвостов нет» but not on a partial one", () => {
    const empty = [
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "empty", {
        status: "empty",
        note: "",
        as_of_date: "2026-03-31",
        movements_scanned: 6,
        rows: [],
      }),
    ];
    const ok = world(empty);
    expect(ok.coverage.outcome).toBe("FULLY_ANSWERED");
    expect(ok.sentence("На 31.03.2026 хвостов по поставщикам нет, все расчёты закрыты.")).toEqual([]);
    expect(ok.sentence("Ни одного поставщика с долгом нет.")).toEqual([]);
    const assumed = scope({
      premises: [
        {
          kind: "time_scope",
          key: "as_of_date",
          value: "31.03.2026",
          label: "Дата",
          status: "assumed",
          source: "default",
          since_turn: 1,
        },
      ],
      reasons: ["MISSING_AS_OF_DATE", "ASSUMPTION_APPLIED_EXPLICITLY"],
    });
    const partial = world(empty, assumed);
    expect(partial.coverage.outcome).toBe("PARTIALLY_ANSWERED");
    expect(partial.sentence("Хвостов нет.").join()).toMatch(/PARTIALLY_ANSWERED/);
    expect(partial.sentence("Ответ полный.").join()).toMatch(/полноте ответа не допускается/);
  });
  it("whole(): the five blocks", () => {
    const w = full();
    expect(w.checker.whole(w.draft.user_facing_answer)).toEqual([]);
    expect(w.checker.whole(w.draft.user_facing_answer.replace("**Что найдено.**", "**Итого.**")).join()).toMatch(
      /Что найдено/,
    );
  });
});

describe("other phrasings of the same claims", () => {
  const timeout = () =>
    world([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "timeout", null, {
        error_code: "MCP_TIMEOUT",
        error_message: "Request timed out",
      }),
    ]);
  const blocked = timeout();
  const ok = full();
  it("after a tool failure, every way of saying «nothing is owed» or «complete» is rejected", () => {
    for (const s of [
      "Все поставщики рассчитались.",
      "Мы никому из поставщиков не должны.",
      "Задолженность перед поставщиками нулевая.",
      "Долги отсутствуют.",
      "Все обязательства перед поставщиками исполнены.",
      "Просроченных долгов нет, но не все документы проверены.",
      "Хвостов не найдено.",
      "Ни у одного поставщика хвостов нет.",
      "Незакрытых остатков нет.",
      "Информация исчерпывающая.",
      "Ограничений нет.",
      "Данные получены в полном объёме.",
      "Расчёты с поставщиками закрыты — это подтверждено регистром.",
      "По данным учёта задолженности перед поставщиками не имеется.",
      "Все счета поставщиков оплачены.",
      "Всё закрыто.",
      "Висящих хвостов не наблюдается.",
    ])
      expect([s, blocked.sentence(s).length > 0]).toEqual([s, true]);
  });
  it("honest limitations pass on the same run", () => {
    for (const s of [
      "Не удалось получить данные из учётной системы: источник не ответил.",
      "Ответ не полный: регистр расчётов не ответил вовремя.",
      "Нельзя сказать, что долгов нет.",
      "Отсутствие данных не означает, что хвостов нет.",
      "Не все расчёты удалось проверить.",
    ])
      expect([s, blocked.sentence(s)]).toEqual([s, []]);
  });
  it("on a full run: correct figures in other writings pass, wrong ones are rejected", () => {
    for (const s of [
      "ООО «Альфа-Снаб» должны 120 000 руб.",
      "АО «ТехноПоставка»: 150 000 ₽ есть.",
      "У троих поставщиков есть долг.",
      "Логистик Плюс — 95 тыс. ₽.",
      "Остальным поставщикам мы ничего не должны.",
    ])
      expect([s, ok.sentence(s)]).toEqual([s, []]);
    for (const s of [
      "У Альфа-Снаба долг 2050р.",
      "ООО «Альфа-Снаб» должны 1.200.000 ₽.",
      "Хвосты у семи контрагентов.",
      "Также хвосты перед «Бета-Сервис».",
      "ООО Beta Group — 120 000 ₽.",
    ])
      expect([s, ok.sentence(s).length > 0]).toEqual([s, true]);
  });
});

describe("the user's own words for a party", () => {
  it("a bound surface names its party; an unknown one may be mentioned but binds no figure or conclusion", () => {
    const techno = toolRun(
      "S1",
      "resolve_counterparty",
      "success",
      {
        status: "ok",
        note: "",
        counterparty_id: "cp-technopostavka",
        candidates: [
          { counterparty_id: "cp-technopostavka", name: "АО «ТехноПоставка»", inn: "1", roles: ["supplier"], score: 1 },
        ],
      },
      { input: { query: "Техно" } },
    );
    const w = world([
      techno,
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "success", {
        status: "ok",
        note: "",
        as_of_date: "2026-03-31",
        movements_scanned: 9,
        rows,
      }),
    ]);
    expect(w.sentence("Контрагент «Техно» привязан к АО «ТехноПоставка»; долг 150 000 ₽.")).toEqual([]);
    const gamma = toolRun(
      "S1",
      "resolve_counterparty",
      "no_match",
      { status: "no_match", note: "", counterparty_id: null, candidates: [] },
      { input: { query: "Гамма" } },
    );
    const g = world([
      gamma,
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "success", {
        status: "ok",
        note: "",
        as_of_date: "2026-03-31",
        movements_scanned: 9,
        rows,
      }),
    ]);
    expect(g.sentence("Контрагент «Гамма» в базе не найден.")).toEqual([]);
    expect(g.sentence("ООО «Гамма» должны 120 000 ₽.").join()).toMatch(/не относится к Гамма/);
    expect(g.sentence("По ООО «Гамма» долгов нет.").join()).toMatch(/по Гамма не подтверждён/);
  });
});

describe("a claim split over two sentences", () => {
  it("whole(): a figure after a party in the same paragraph is that party's, unless it is a total", () => {
    const w = full();
    const techno = fid(w, "Техно");
    const split = `ООО «Альфа-Снаб» — крупнейший должник. Долг 150 000,00 ₽ [${techno}].`;
    expect(checkAnswer(split, w.checker).issues.join()).toMatch(/150 000 ₽ после упоминания ООО «Альфа-Снаб»/);
    expect(
      w.checker.whole(
        `${w.draft.user_facing_answer}\nАО «ТехноПоставка» — крупнейший. Долг 150 000,00 ₽ [${techno}]. Итого по всем 365 000 ₽.`,
      ),
    ).toEqual([]);
  });
});
