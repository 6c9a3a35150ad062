/** One line per goal at the end of a benchmark run: `name: ratio X (goal …) ok|short`. */
export interface Goal {
  name: string;
  ratio: number;
  goal: string;
  ok: boolean;
  /** A figure kept beside a goal that is set for another backend (the goals are for the PostgreSQL server). */
  informational?: boolean;
  /** A figure against a second reference, printed with its old goal but not judged (issue 19: the database-only floor). */
  reference?: boolean;
}

export function goalLine(g: Goal): string {
  const r = Number.isFinite(g.ratio) ? g.ratio.toFixed(g.ratio < 0.1 ? 3 : 2) : "n/a";
  const scope = g.informational ? "; the goal is set for the PostgreSQL server, shown for reference" : "";
  if (g.reference) return `${g.name}: ratio ${r} (reference; was the goal ${g.goal}) —`;
  return `${g.name}: ratio ${r} (goal ${g.goal}${scope}) ${g.ok ? "ok" : "short"}`;
}
