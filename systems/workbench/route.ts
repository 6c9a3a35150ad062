// Stage 04: source routing. Each task keeps the source mode of the validated plan; the run loads
// documentation only for documentation/mixed tasks and extracts domain entities only for
// domain/mixed/conversation tasks — domain never loads docs, documentation never resolves entities.
import type { Plan, SourceMode } from "./types";

export interface Routing {
  tasks: Array<{ taskId: string; intent: string; sourceMode: SourceMode }>;
  loadDocumentation: boolean;
  resolveDomain: boolean;
  useConversation: boolean;
  /** The run's overall mode, as one label for the trace. */
  mode: SourceMode;
}

export function routeSources(plan: Plan): Routing {
  const tasks = plan.tasks.map((t) => ({ taskId: t.id, intent: t.intent, sourceMode: t.sourceMode }));
  const modes = new Set(tasks.map((t) => t.sourceMode));
  const loadDocumentation = modes.has("documentation") || modes.has("mixed");
  const resolveDomain = modes.has("domain") || modes.has("mixed") || modes.has("conversation");
  const useConversation = modes.has("conversation");
  const mode: SourceMode =
    modes.size === 0
      ? "none"
      : modes.size === 1
        ? [...modes][0]!
        : loadDocumentation && resolveDomain
          ? "mixed"
          : ([...modes].find((m) => m !== "none") ?? "none");
  return { tasks, loadDocumentation, resolveDomain, useConversation, mode };
}

/** The documentation query for a run: the request minus names (names are domain, not docs). */
export function documentationQuery(canonical: string, plan: Plan): string {
  let q = canonical;
  for (const t of plan.tasks)
    for (const m of t.mentions) if (t.sourceMode !== "documentation") q = q.split(m).join(" ");
  return q;
}
