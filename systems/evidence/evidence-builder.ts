// ToolRun[] → EvidenceBundle (seed 002 §8.5): normalized facts with ids, entity bindings,
// source refs, gaps, execution errors and conflicts — the only ground truth the answer uses.
import type { EvidenceBundle, ExecutionPlan, Fact, ToolRun } from "./artifacts";
import type { ReasonCode } from "./reason-codes";
import type { ToolName, ToolOutput } from "./tool-contracts";
import {
  displayCode,
  displayName,
  displayTitle,
  NAME_CHECK,
  namePlaceholder,
  type FlaggedString,
} from "./tool-strings";

export const money = (n: number) =>
  `${n.toLocaleString("ru-RU", { minimumFractionDigits: 2, maximumFractionDigits: 2 }).replace(/\u00a0/g, " ")} ₽`;
export const ruDate = (iso: string) => iso.split("-").reverse().join(".");

type Out<N extends ToolName> = ToolOutput<N>;

/** A bundle with nothing in it: where a turn gathered no evidence, and what `buildEvidence` fills. */
export const emptyBundle = (requestId: string): EvidenceBundle => ({
  request_id: requestId,
  facts: [],
  entity_bindings: [],
  source_refs: [],
  documents: [],
  conflicts: [],
  not_found: [],
  execution_errors: [],
  truncated: [],
});

export function buildEvidence(
  requestId: string,
  plan: ExecutionPlan,
  runs: ToolRun[],
  truncated: EvidenceBundle["truncated"],
): EvidenceBundle {
  const b: EvidenceBundle = { ...emptyBundle(requestId), truncated };
  const refIds = new Map<string, string>();
  const seen = new Set<string>();
  const src = (raw: string, run: ToolRun, kind: string) => {
    let id = refIds.get(raw);
    if (!id) {
      id = `SRC${refIds.size + 1}`;
      refIds.set(raw, id);
      const [object_type, object_id] = raw.includes(":")
        ? [raw.slice(0, raw.indexOf(":")), raw.slice(raw.indexOf(":") + 1)]
        : [raw, raw];
      b.source_refs.push({ source_ref: id, kind, object_type, object_id, tool_run_id: run.tool_run_id });
    }
    return id;
  };
  const fact = (f: Omit<Fact, "fact_id">) => {
    const key = `${f.type}|${f.entity_id}|${f.source_ref}|${JSON.stringify(f.details)}`;
    if (seen.has(key)) return null; // the same fact seen through two routes counts once
    seen.add(key);
    const full = { fact_id: `F${b.facts.length + 1}`, ...f };
    b.facts.push(full);
    return full;
  };
  const gap = (r: ToolRun, what: string, reason_code: ReasonCode) =>
    b.not_found.push({ step_id: r.step_id, tool: r.tool_name, what, reason_code });
  const names = new Map<string, string>();
  // The counterparty directory's entries seen in this run (resolve_counterparty): the reference a
  // name from another tool is checked against.
  const directory = new Map<string, string>();
  for (const r of runs)
    if (r.tool_name === "resolve_counterparty" && r.output)
      for (const c of (r.output as Out<"resolve_counterparty">).candidates ?? [])
        directory.set(c.counterparty_id, c.name);
  // The engine's own name check (plan-rules.ts withNameCheck): codes looked up in the directory. A
  // code the directory answered for without an entry has no name to show but a placeholder.
  const checking = new Set(plan.steps.filter((s) => s.type === NAME_CHECK).map((s) => s.step_id));
  const looked = new Set(
    runs
      .filter((r) => checking.has(r.step_id) && (r.status === "success" || r.status === "no_match"))
      .map((r) => String(r.input.query ?? "")),
  );
  const flagged: FlaggedString[] = [];
  // Strings from tool data are data: a name is shown only as a name, a number only as a number (tool-strings.ts).
  const nameOf = (r: ToolRun, field: string, value: string, id: string | null) => {
    const unknown = !!id && r.tool_name !== "resolve_counterparty" && looked.has(id) && !directory.has(id);
    const d = unknown
      ? { text: namePlaceholder(id), flag: "directory_mismatch" as const }
      : displayName(value, id, r.tool_name === "resolve_counterparty" ? undefined : directory);
    if (d.flag && !flagged.some((f) => f.field === field && f.id === id && f.tool === r.tool_name))
      flagged.push({ tool: r.tool_name, step_id: r.step_id, field, id, reason: d.flag });
    return d.text;
  };
  const codeOf = (r: ToolRun, field: string, value: string, id: string | null) => {
    const d = field.endsWith("kind") ? displayTitle(value) : displayCode(value);
    if (d.flag) flagged.push({ tool: r.tool_name, step_id: r.step_id, field, id, reason: d.flag });
    return d.text;
  };
  // Whether the run read this party's balance on this date (get_balance_as_of).
  const balanceRead = (cp: string, date: string) =>
    runs.some(
      (x) =>
        x.tool_name === "get_balance_as_of" &&
        x.input.counterparty_id === cp &&
        x.input.as_of_date === date &&
        (x.status === "success" || x.status === "empty"),
    );
  // A tool's free-text note is never passed on as data: the gap is described by the engine.
  const noNote = (r: ToolRun) => `нет данных по запросу ${r.tool_name}`;

  for (const r of runs) {
    if (
      r.error_code &&
      ["timeout", "tool_error", "schema_error", "invalid_output", "unavailable", "skipped"].includes(r.status)
    ) {
      b.execution_errors.push({
        step_id: r.step_id,
        tool: r.tool_name,
        what: JSON.stringify(r.input),
        reason_code: r.error_code,
        message: r.error_message ?? "",
      });
      continue;
    }
    if (!r.output) continue;
    switch (r.tool_name) {
      case "resolve_counterparty": {
        // A name check reads the directory for the engine; it binds nothing the user said.
        if (checking.has(r.step_id)) break;
        const o = r.output as Out<"resolve_counterparty">;
        const query = String(r.input.query ?? "");
        const top = o.candidates.find((c) => c.counterparty_id === o.counterparty_id);
        const shown = (c: { counterparty_id: string; name: string }) =>
          nameOf(r, "candidates.name", c.name, c.counterparty_id);
        const topName = top ? shown(top) : null;
        b.entity_bindings.push({
          surface: query,
          resolved_to: topName,
          entity_id: o.counterparty_id,
          confidence: top?.score ?? 0,
          status: o.status === "ok" ? "bound" : o.status === "ambiguous" ? "ambiguous" : "not_found",
          candidates: o.candidates.map((c) => ({ id: c.counterparty_id, name: shown(c) })),
          narrowed_by_role:
            o.status === "ok"
              ? (o.outside_role ?? []).map((c) => ({
                  id: c.counterparty_id,
                  name: nameOf(r, "outside_role.name", c.name, c.counterparty_id),
                }))
              : [],
        });
        if (top) {
          names.set(top.counterparty_id, topName!);
          fact({
            type: "entity_binding",
            entity: topName!,
            entity_id: top.counterparty_id,
            value: top.inn,
            currency: null,
            as_of_date: null,
            source_ref: src(`Справочник.Контрагенты:${top.counterparty_id}`, r, "1C_catalog"),
            details: { surface: query, roles: top.roles },
          });
        } else if (o.status === "no_match") gap(r, `контрагент «${query}»`, "ENTITY_NOT_RESOLVED");
        break;
      }
      case "resolve_period_or_asof": {
        const o = r.output as Out<"resolve_period_or_asof">;
        if (o.as_of_date)
          fact({
            type: "as_of_date",
            entity: "дата отсечения",
            entity_id: null,
            value: o.as_of_date,
            currency: null,
            as_of_date: o.as_of_date,
            source_ref: src(`Константа.РабочаяДата:${o.working_date}`, r, "1C_constant"),
            details: {
              source: o.source,
              period_from: o.period_from,
              period_to: o.period_to,
              data_available_from: o.data_available_from,
              working_date: o.working_date,
              relative: !!o.relative,
            },
          });
        else
          gap(
            r,
            `дата в словах «${String(r.input.text ?? "")}»`,
            o.problem === "impossible_date"
              ? "INVALID_DATE"
              : o.problem === "future_date"
                ? "FUTURE_DATE"
                : "MISSING_AS_OF_DATE",
          );
        break;
      }
      case "get_open_supplier_settlements": {
        const o = r.output as Out<"get_open_supplier_settlements">;
        for (const row of o.rows) {
          const name = nameOf(r, "rows.counterparty_name", row.counterparty_name, row.counterparty_id);
          names.set(row.counterparty_id, name);
          // The same register read beside the party's balance (a due-date question on the balance
          // route): its rows are that balance by contract, so they hold the payment terms, not a
          // second balance to add up.
          if (balanceRead(row.counterparty_id, o.as_of_date)) {
            fact({
              type: "due_date",
              entity: name,
              entity_id: row.counterparty_id,
              value: row.oldest_due_date,
              currency: null,
              as_of_date: o.as_of_date,
              source_ref: src(row.source_ref, r, "1C_register_extract"),
              details: {
                contract: codeOf(r, "rows.contract_number", row.contract_number, row.contract_id),
                contract_id: row.contract_id,
                balance: row.balance,
                overdue_amount: row.overdue_amount,
                oldest_due_date: row.oldest_due_date,
              },
            });
            continue;
          }
          fact({
            type: "open_balance",
            entity: name,
            entity_id: row.counterparty_id,
            value: row.balance,
            currency: row.currency,
            as_of_date: o.as_of_date,
            source_ref: src(row.source_ref, r, "1C_register_extract"),
            details: {
              contract: codeOf(r, "rows.contract_number", row.contract_number, row.contract_id),
              contract_id: row.contract_id,
              overdue_amount: row.overdue_amount,
              oldest_due_date: row.oldest_due_date,
              last_movement_date: row.last_movement_date,
            },
          });
        }
        if (
          o.status === "empty" &&
          !(r.input.counterparty_id && balanceRead(String(r.input.counterparty_id), o.as_of_date))
        )
          fact({
            type: "no_open_balance",
            entity: "поставщики",
            entity_id: null,
            value: 0,
            currency: "RUB",
            as_of_date: o.as_of_date,
            source_ref: src(`РегистрНакопления.РасчетыСПоставщиками:*@${o.as_of_date}`, r, "1C_register_extract"),
            details: { movements_scanned: o.movements_scanned, overdue_only: !!r.input.overdue_only },
          });
        if (o.status === "no_match") gap(r, noNote(r), "NO_MATCH_IN_1C");
        if (o.status === "unbound_entity") gap(r, noNote(r), "ENTITY_NOT_RESOLVED");
        break;
      }
      case "get_unclosed_documents_for_counterparty": {
        const o = r.output as Out<"get_unclosed_documents_for_counterparty">;
        for (const row of o.rows) {
          b.documents.push({ ...row, counterparty_id: o.counterparty_id });
          fact({
            type: "unclosed_document",
            entity: names.get(o.counterparty_id) ?? o.counterparty_id,
            entity_id: o.counterparty_id,
            value: row.unpaid,
            currency: "RUB",
            as_of_date: o.as_of_date,
            source_ref: src(row.source_ref, r, "1C_document"),
            details: {
              document_id: row.document_id,
              kind: codeOf(r, "rows.kind", row.kind, row.document_id),
              number: codeOf(r, "rows.number", row.number, row.document_id),
              date: row.date,
              amount: row.amount,
              paid: row.paid,
              posted: row.posted,
            },
          });
        }
        if (o.status === "no_match")
          gap(
            r,
            `документы поступления ${names.get(o.counterparty_id) ?? o.counterparty_id} до ${ruDate(o.as_of_date)}`,
            "NO_MATCH_IN_1C",
          );
        if (o.status === "unbound_entity") gap(r, noNote(r), "ENTITY_NOT_RESOLVED");
        break;
      }
      case "get_payment_chain": {
        const o = r.output as Out<"get_payment_chain">;
        for (const p of o.rows)
          fact({
            type: "payment",
            entity: names.get(o.counterparty_id) ?? o.counterparty_id,
            entity_id: o.counterparty_id,
            value: p.amount,
            currency: "RUB",
            as_of_date: null,
            source_ref: src(p.source_ref, r, "1C_document"),
            details: {
              payment_id: p.payment_id,
              number: codeOf(r, "rows.number", p.number, p.payment_id),
              date: p.date,
              posted: p.posted,
              allocations: p.allocations.map((a) => ({
                ...a,
                document_number: codeOf(r, "rows.allocations.document_number", a.document_number, a.document_id),
              })),
            },
          });
        if (o.status === "unbound_entity") gap(r, noNote(r), "ENTITY_NOT_RESOLVED");
        break;
      }
      case "get_balance_as_of": {
        const o = r.output as Out<"get_balance_as_of">;
        const name = o.counterparty_name
          ? nameOf(r, "counterparty_name", o.counterparty_name, o.counterparty_id)
          : (names.get(o.counterparty_id) ?? nameOf(r, "counterparty_id", o.counterparty_id, o.counterparty_id));
        names.set(o.counterparty_id, name);
        if (o.status === "ok" && o.balance !== null)
          fact({
            type: "balance",
            entity: name,
            entity_id: o.counterparty_id,
            value: o.balance,
            currency: "RUB",
            as_of_date: o.as_of_date,
            source_ref: src(
              o.source_ref ?? `РегистрНакопления.РасчетыСПоставщиками:${o.counterparty_id}`,
              r,
              "1C_register_extract",
            ),
            details: { by_contract: o.by_contract, movements_count: o.movements_count },
          });
        if (o.status === "no_match") gap(r, noNote(r), "NO_MATCH_IN_1C");
        if (o.status === "unbound_entity") gap(r, noNote(r), "ENTITY_NOT_RESOLVED");
        break;
      }
      case "get_related_closing_documents": {
        const o = r.output as Out<"get_related_closing_documents">;
        for (const row of o.rows)
          fact({
            type: "closing_document",
            entity: codeOf(r, "rows.kind", row.kind, o.document_id),
            entity_id: o.document_id,
            value: row.amount,
            currency: "RUB",
            as_of_date: null,
            source_ref: src(row.source_ref, r, "1C_document"),
            details: {
              for_document_id: o.document_id,
              number: codeOf(r, "rows.number", row.number, o.document_id),
              date: row.date,
              kind: codeOf(r, "rows.kind", row.kind, o.document_id),
            },
          });
        if (o.missing_kinds.length) {
          const doc = b.documents.find((d) => d.document_id === o.document_id);
          gap(
            r,
            `${doc ? `к документу «${displayTitle(String(doc.kind)).text} № ${displayCode(String(doc.number)).text} от ${ruDate(String(doc.date))}»` : `к документу ${displayCode(o.document_id).text}`} нет: ${o.missing_kinds.map((k) => codeOf(r, "missing_kinds.kind", k, o.document_id)).join(", ")}`,
            "MISSING_SUPPORTING_DOCUMENT",
          );
        }
        break;
      }
      case "get_document_movements": {
        const o = r.output as Out<"get_document_movements">;
        for (const m of o.rows)
          fact({
            type: "document_movement",
            entity: m.register,
            entity_id: o.document_id,
            value: m.amount,
            currency: "RUB",
            as_of_date: m.period,
            source_ref: src(m.source_ref, r, "1C_register_extract"),
            details: { period: m.period, contract_id: m.contract_id },
          });
        if (o.status === "empty" && o.posted === false)
          gap(
            r,
            `документ ${displayCode(o.document_id).text} не проведён — движений нет`,
            "INSUFFICIENT_DOCUMENT_DEPTH",
          );
        break;
      }
    }
  }
  findConflicts(b, plan, runs);
  if (flagged.length) b.flagged_strings = flagged;
  return b;
}

/**
 * The register's balance against what documents and payments add up to, per counterparty:
 * Σ unpaid receipts − Σ unallocated payments. A difference is a conflict, never averaged away.
 */
function findConflicts(b: EvidenceBundle, _plan: ExecutionPlan, runs: ToolRun[]) {
  const okRun = (tool: string, cp: string) =>
    runs.find(
      (r) =>
        r.tool_name === tool &&
        r.input.counterparty_id === cp &&
        (r.status === "success" || r.status === "empty" || r.status === "no_match"),
    );
  const register = new Map<string, { value: number; facts: string[]; entity: string }>();
  for (const f of b.facts) {
    if ((f.type === "open_balance" || f.type === "balance") && f.entity_id && typeof f.value === "number") {
      const cur = register.get(f.entity_id) ?? { value: 0, facts: [], entity: f.entity };
      register.set(f.entity_id, { value: cur.value + f.value, facts: [...cur.facts, f.fact_id], entity: f.entity });
    }
  }
  for (const [cp, reg] of register) {
    const docs = okRun("get_unclosed_documents_for_counterparty", cp);
    const pays = okRun("get_payment_chain", cp);
    if (!docs || !pays) continue;
    const unpaid = b.facts.filter((f) => f.type === "unclosed_document" && f.entity_id === cp);
    const payments = b.facts.filter((f) => f.type === "payment" && f.entity_id === cp);
    const unallocated = payments.reduce(
      (s, p) =>
        s +
        (p.value as number) -
        ((p.details.allocations as { amount: number }[]) ?? []).reduce((a, x) => a + x.amount, 0),
      0,
    );
    const byDocs = unpaid.reduce((s, f) => s + (f.value as number), 0) - unallocated;
    if (Math.abs(byDocs - reg.value) < 0.01) continue;
    const unposted = payments.filter((p) => p.details.posted === false);
    const why = unposted.length
      ? ` Возможная причина: ${unposted.map((p) => `оплата № ${p.details.number} от ${ruDate(String(p.details.date))} на ${money(p.value as number)} не проведена`).join("; ")}.`
      : "";
    b.conflicts.push({
      conflict_id: `C${b.conflicts.length + 1}`,
      entity: reg.entity,
      entity_id: cp,
      description: `По регистру расчётов остаток ${money(reg.value)}, а по документам и оплатам — ${money(byDocs)}.${why}`,
      fact_ids: [...reg.facts, ...unpaid.map((f) => f.fact_id), ...payments.map((f) => f.fact_id)],
    });
  }
}
