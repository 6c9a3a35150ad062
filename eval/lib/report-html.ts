import { clinicChecks, countCalls, workbenchChecks, type Check } from "./checks";
import type { ConfigReport } from "./evaluate";
import { evidenceChecks } from "./evidence-metrics";
import { fmt, headlines } from "./headline";
import type { Ratio } from "./metrics";

/** A single self-contained HTML page of the report (no scripts, no external assets). */

const esc = (s: unknown) =>
  String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
const pct = (x: Ratio | { value: number | null }) => fmt({ value: x.value, kind: "ratio" });

function tbl(head: string[], rows: unknown[][], cls = ""): string {
  return `<table class="${cls}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map(
      (r) => `<tr>${r.map((c) => `<td>${typeof c === "string" && c.startsWith("<") ? c : esc(c)}</td>`).join("")}</tr>`,
    )
    .join("")}</tbody></table>`;
}

function bar(value: number | null, better: "higher" | "lower" | "none" = "higher"): string {
  if (value === null) return "—";
  const hue = Math.round((better === "lower" ? 1 - value : value) * 120);
  return `<span class="bar"><span style="width:${(value * 100).toFixed(1)}%;background:hsl(${hue} 60% 45%)"></span></span> ${fmt({ value, kind: "ratio" })}`;
}

function headline(reports: ConfigReport[]): string {
  const cols = reports.map(headlines);
  const keys = [...new Set(cols.flatMap((c) => c.map((h) => h.key)))];
  return tbl(
    ["metric", ...reports.map((r) => r.config.name), "n"],
    keys.map((k) => {
      const hs = cols.map((c) => c.find((h) => h.key === k));
      const any = hs.find(Boolean)!;
      return [
        any.label,
        ...hs.map((h) => (h ? (h.kind === "ratio" ? bar(h.value, h.better) : fmt(h)) : "—")),
        any.n ?? "",
      ];
    }),
  );
}

function perConfig(r: ConfigReport): string {
  const parts: string[] = [];
  const roles: Record<string, { calls: number; meanPromptTokens: number; meanLatencyMs: number }> = {
    ...(r.workbench?.roles ?? {}),
    ...(r.clinic?.roles ?? {}),
  };
  for (const [k, v] of Object.entries(r.evidence?.roles ?? {})) roles[`evidence ${k}`] = v;
  const stageRows: unknown[][] = [];
  const stages = { ...(r.clinic?.stages ?? {}), ...(r.workbench?.stages ?? {}) } as Record<
    string,
    { turns: number; accuracy: Ratio; measure: string }
  >;
  if (r.evidence) for (const [role, s] of Object.entries(r.evidence.stages)) stages[`evidence ${role}`] = s;
  for (const [role, s] of Object.entries(stages))
    stageRows.push([
      role,
      s.turns,
      bar(s.accuracy.value),
      s.measure,
      roles[role]?.calls ?? 0,
      roles[role]?.meanPromptTokens.toFixed(0) ?? "—",
      `${roles[role]?.meanLatencyMs.toFixed(0) ?? "—"} ms`,
    ]);
  parts.push(
    `<h3>Model stages</h3>${tbl(["stage (role)", "called on", "accuracy there", "measured by", "calls", "prompt tok/call", "latency/call"], stageRows)}`,
  );
  if (r.workbench) {
    parts.push(
      `<h3>Model calls against seed 001's table</h3>${tbl(
        ["row", "requests", "prep (mean)", "final (mean)", "within"],
        r.workbench.seedTable.map((s) => [
          s.label,
          s.turns,
          s.meanPrep.toFixed(2),
          s.meanFinal.toFixed(2),
          bar(s.within.value),
        ]),
      )}`,
    );
    const c = r.workbench.clarification;
    parts.push(
      `<h3>Clarification</h3>${tbl(["asked & labelled", "asked, not labelled", "labelled, not asked", "neither", "precision", "recall"], [[c.tp, c.fp, c.fn, c.tn, fmt({ value: c.precision, kind: "ratio" }), fmt({ value: c.recall, kind: "ratio" })]])}`,
    );
  }
  const tags = {
    ...Object.fromEntries(Object.entries(r.workbench?.byTag ?? {}).map(([k, v]) => [`workbench: ${k}`, v])),
    ...Object.fromEntries(Object.entries(r.clinic?.byTag ?? {}).map(([k, v]) => [`clinic: ${k}`, v])),
    ...Object.fromEntries(Object.entries(r.evidence?.byTag ?? {}).map(([k, v]) => [`evidence: ${k}`, v])),
  };
  parts.push(
    `<h3>Phenomena (tags): turns fully as labelled</h3>${tbl(
      ["tag", "turns", "pass"],
      Object.entries(tags).map(([k, v]) => [k, v.n, bar(v.value)]),
      "compact",
    )}`,
  );
  if (r.outcomes) {
    parts.push(
      `<h3>Outcome classes (runs table)</h3>${tbl(
        ["kind", "outcome", "runs"],
        r.outcomes.byOutcome.map((o) => [o.kind, o.outcome ?? "(none)", o.runs]),
        "compact",
      )}`,
    );
    parts.push(
      `<h3>Reason codes (runs table)</h3>${tbl(
        ["kind", "reason code", "runs"],
        r.outcomes.byReasonCode.map((o) => [o.kind, o.reasonCode, o.runs]),
        "compact",
      )}`,
    );
  }
  if (r.evidence)
    parts.push(
      `<h3>Evidence outcome confusion (labelled → observed)</h3>${tbl(
        ["labelled", "observed"],
        Object.entries(r.evidence.confusion).map(([k, v]) => [
          k,
          Object.entries(v)
            .map(([o, n]) => `${o}: ${n}`)
            .join(", "),
        ]),
      )}`,
    );
  parts.push(
    `<h3>Transition coverage</h3>${tbl(
      ["machine", "covered", "defined", "not covered"],
      r.coverage.map((m) => [m.machine, m.covered, m.defined, `<code>${m.missing.map(esc).join("<br>")}</code>`]),
    )}`,
  );
  parts.push(`<h3>Turns</h3>${turnsTable(r)}`);
  return parts.join("\n");
}

function checksOf(t: ConfigReport["turns"][number]): Check[] {
  if (t.suite === "workbench") return workbenchChecks(t);
  if (t.suite === "clinic") return clinicChecks(t);
  return evidenceChecks(t);
}

function turnsTable(r: ConfigReport): string {
  const rows = r.turns.map((t) => {
    const checks = checksOf(t);
    const failed = checks.filter((c) => !c.ok);
    const calls = Object.entries(countCalls(t.calls))
      .map(([k, v]) => `${k}×${v}`)
      .join(" ");
    return [
      `<span class="${failed.length ? "bad" : "ok"}">${failed.length ? "✗" : "✓"}</span>`,
      `${t.suite} ${t.caseId} #${t.turn + 1}`,
      t.text,
      calls,
      `${t.ms.toFixed(0)} ms`,
      failed.length
        ? `<details><summary>${failed.length} failed</summary>${failed.map((c) => `<div><b>${esc(c.name)}</b>: ${esc(c.detail)}</div>`).join("")}</details>`
        : `${checks.length} checks`,
    ];
  });
  return tbl(["", "turn", "text", "model calls", "time", "checks"], rows, "turns");
}

export function htmlReport(reports: ConfigReport[]): string {
  const title = `Evaluation — ${reports.map((r) => `${r.config.name} (${r.mode})`).join(" vs ")}`;
  return `<!doctype html><html lang="ru"><head><meta charset="utf-8"><title>${esc(title)}</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.compact td{padding:2px 8px}.bar{display:inline-block;width:90px;height:9px;background:#eee;vertical-align:middle}
.bar span{display:block;height:100%}.ok{color:#2a7a2a}.bad{color:#b22}code{font-size:12px}.turns td:nth-child(3){max-width:420px}
</style></head><body><h1>${esc(title)}</h1><p>Generated ${esc(new Date().toISOString())}. ${reports.map((r) => `${esc(r.config.name)}: ${(r.durationMs / 1000).toFixed(1)} s, switches ${esc(JSON.stringify(r.config.switches))}`).join("; ")}</p>
<h2>Headline</h2>${headline(reports)}
${reports
  .map(
    (r) =>
      `<h2>${esc(r.config.name)}</h2>${Object.entries(r.skipped)
        .map(([k, v]) => `<p>${esc(k)} skipped: ${esc(v)}</p>`)
        .join("")}${perConfig(r)}`,
  )
  .join("\n")}
</body></html>`;
}
