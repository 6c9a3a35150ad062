import type { ConfigReport } from "./evaluate";
import { fmt, headlines, type Headline } from "./headline";

/** The terminal report: one column per configuration (two with --compare, with the difference). */

function table(rows: string[][], align: ("l" | "r")[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...(r[i] ?? "")].length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (align[i] === "r" ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function delta(a: Headline | undefined, b: Headline | undefined): string {
  if (a?.value == null || b?.value == null) return "";
  const d = b.value - a.value;
  if (Math.abs(d) < 1e-9) return "=";
  const s = a.kind === "ratio" ? `${(d * 100).toFixed(1)} pp` : a.kind === "ms" ? `${d.toFixed(0)} ms` : d.toFixed(2);
  const better = a.better === "none" ? "" : (a.better === "higher") === d > 0 ? " ▲" : " ▼";
  return `${d > 0 ? "+" : ""}${s}${better}`;
}

export function headlineTable(reports: ConfigReport[]): string {
  const cols = reports.map((r) => headlines(r));
  const keys = [...new Set(cols.flatMap((c) => c.map((h) => h.key)))];
  const header = ["metric", ...reports.map((r) => r.config.name), ...(reports.length === 2 ? ["Δ"] : []), "n"];
  const rows = keys.map((k) => {
    const hs = cols.map((c) => c.find((h) => h.key === k));
    const any = hs.find(Boolean)!;
    return [
      any.label,
      ...hs.map((h) => (h ? fmt(h) : "—")),
      ...(reports.length === 2 ? [delta(hs[0], hs[1])] : []),
      String(any.n ?? ""),
    ];
  });
  return table(
    [header, ...rows],
    ["l", ...reports.map(() => "r" as const), ...(reports.length === 2 ? ["r" as const] : []), "r"],
  );
}

function stagesTable(rep: ConfigReport): string {
  const rows: string[][] = [
    ["stage (role)", "called on", "accuracy there", "measured by", "calls", "prompt tok/call", "latency/call"],
  ];
  // Workbench and clinic use different roles; the evidence workflow shares PLANNER/ANSWER, so it gets its own rows.
  const roles = { ...(rep.workbench?.roles ?? {}), ...(rep.clinic?.roles ?? {}) };
  type Stage = { turns: number; accuracy: { value: number | null }; measure: string };
  /** A stage's row: how it did where it was called, and what its role's calls cost. */
  const row = (label: string, s: Stage, u: (typeof roles)[string] | undefined) => [
    label,
    String(s.turns),
    fmt({ value: s.accuracy.value, kind: "ratio" }),
    s.measure,
    String(u?.calls ?? 0),
    u ? u.meanPromptTokens.toFixed(0) : "—",
    u ? `${u.meanLatencyMs.toFixed(0)} ms` : "—",
  ];
  const add = (role: string, s: Stage | undefined) => {
    if (s) rows.push(row(role, s, roles[role]));
  };
  if (rep.clinic) (["router", "branch"] as const).forEach((r) => add(r, rep.clinic!.stages[r]));
  if (rep.workbench)
    (["planner", "reranker", "classifier", "answer"] as const).forEach((r) => add(r, rep.workbench!.stages[r]));
  if (rep.evidence) {
    const ev = rep.evidence.roles;
    for (const r of ["planner", "answer"] as const) {
      const label = `evidence ${r === "planner" ? "interpreter/planner/critic" : "answer"}`;
      rows.push(row(label, rep.evidence.stages[r], ev[r]));
    }
  }
  return table(rows, ["l", "r", "r", "l", "r", "r", "r"]);
}

function seedTable(rep: ConfigReport): string {
  if (!rep.workbench) return "";
  const rows = [["seed 001 row", "requests", "prep calls (mean)", "final calls (mean)", "within table"]];
  for (const s of rep.workbench.seedTable)
    rows.push([
      s.label,
      String(s.turns),
      s.meanPrep.toFixed(2),
      s.meanFinal.toFixed(2),
      fmt({ value: s.within.value, kind: "ratio" }),
    ]);
  return table(rows, ["l", "r", "r", "r", "r"]);
}

function outcomesTable(rep: ConfigReport): string {
  if (!rep.outcomes) return "";
  const rows = [
    ["kind", "outcome", "runs"],
    ...rep.outcomes.byOutcome.map((o) => [o.kind, o.outcome ?? "(none)", String(o.runs)]),
  ];
  const rc = [
    ["kind", "reason code", "runs"],
    ...rep.outcomes.byReasonCode.map((o) => [o.kind, o.reasonCode, String(o.runs)]),
  ];
  return `${table(rows, ["l", "l", "r"])}\n\n${table(rc, ["l", "l", "r"])}`;
}

function coverageTable(rep: ConfigReport): string {
  const rows = [["machine", "transitions covered", "of", "not covered"]];
  for (const m of rep.coverage)
    rows.push([
      m.machine,
      String(m.covered),
      String(m.defined),
      m.missing
        .slice(0, 4)
        .map((k) => k.split("|").slice(0, 3).join(" "))
        .join("; ") + (m.missing.length > 4 ? " …" : ""),
    ]);
  return table(rows, ["l", "r", "r", "l"]);
}

function failures(rep: ConfigReport, limit: number): string {
  const all = [
    ...(rep.workbench?.failures ?? []).map((f) => ({ s: "workbench", f })),
    ...(rep.clinic?.failures ?? []).map((f) => ({ s: "clinic", f })),
    ...(rep.evidence?.failures ?? []).map((f) => ({ s: "evidence", f })),
  ];
  if (!all.length) return "no failing turns";
  const lines = all
    .slice(0, limit)
    .map(
      ({ s, f }) =>
        `  ${s} ${f.caseId} #${f.turn + 1} «${f.text.slice(0, 60)}»: ${f.failed.map((c) => `${c.name} — ${c.detail}`).join("; ")}`,
    );
  return `${all.length} failing turn(s)${all.length > limit ? ` (first ${limit}; --verbose for all)` : ""}\n${lines.join("\n")}`;
}

export function textReport(reports: ConfigReport[], o: { verbose?: boolean } = {}): string {
  const head = reports.map((r) => `${r.config.name}: ${r.mode}, ${(r.durationMs / 1000).toFixed(1)} s`).join(" | ");
  const parts = [`Evaluation — ${head}`, headlineTable(reports)];
  for (const r of reports) {
    const title = reports.length > 1 ? ` [${r.config.name}]` : "";
    for (const [k, v] of Object.entries(r.skipped)) parts.push(`${k} skipped: ${v}`);
    parts.push(`Model stages${title}\n${stagesTable(r)}`);
    if (r.workbench) parts.push(`Model calls against seed 001's table${title}\n${seedTable(r)}`);
    if (reports.length === 1) {
      parts.push(`Outcome classes and reason codes (runs table)\n${outcomesTable(r)}`);
      parts.push(`Transition coverage by the dataset\n${coverageTable(r)}`);
    }
    parts.push(`Failures${title}\n${failures(r, o.verbose ? Infinity : 15)}`);
  }
  return parts.join("\n\n");
}
