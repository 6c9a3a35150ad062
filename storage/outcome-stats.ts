import type { Tx } from "./db";

/**
 * How a run that handed the conversation to a human stores why, among its reason codes
 * (`escalation:acute_pain`): any system may escalate, and the statistics count them by reason.
 */
export const ESCALATION_PREFIX = "escalation:";

export interface OutcomeStatsFilter {
  tenantId: string;
  kind?: string;
  since?: Date;
}

export interface OutcomeStats {
  total: number;
  byKind: { kind: string; runs: number; completed: number; failed: number }[];
  byOutcome: { kind: string; outcome: string | null; runs: number }[];
  byReasonCode: { kind: string; reasonCode: string; runs: number }[];
  /** Outcome with its reason-code set: what a run's §14.3 class is derived from. */
  byOutcomeAndReasons: { kind: string; outcome: string | null; reasonCodes: string[]; runs: number }[];
}

/** Finished runs of every system, grouped three ways in one round trip each; running ones are not counted. */
export async function outcomeStats(sql: Tx, f: OutcomeStatsFilter): Promise<OutcomeStats> {
  // Through the tenant's conversations (their index, then runs_conversation): no index of its
  // own on runs, so a run's close writes no entry for this page (migration 000019).
  const where = sql`conversation_id in (select id from conversations where tenant_id = ${f.tenantId}${f.kind ? sql` and kind = ${f.kind}` : sql``})
    and tenant_id = ${f.tenantId} and status <> 'running'
    ${f.kind ? sql`and kind = ${f.kind}` : sql``} ${f.since ? sql`and created_at >= ${f.since}` : sql``}`;
  const byKind = await sql<{ kind: string; runs: number; completed: number; failed: number }[]>`
    select kind, count(*)::int as runs, count(*) filter (where status = 'completed')::int as completed, count(*) filter (where status = 'failed')::int as failed
    from runs where ${where} group by kind order by kind`;
  const byOutcome = await sql<{ kind: string; outcome: string | null; runs: number }[]>`
    select kind, outcome, count(*)::int as runs from runs where ${where} group by kind, outcome order by kind, runs desc, outcome`;
  const byReason = await sql<{ kind: string; reason_code: string; runs: number }[]>`
    select kind, rc as reason_code, count(*)::int as runs from runs, unnest(reason_codes) as rc where ${where}
    group by kind, rc order by kind, runs desc, rc`;
  const combos = await sql<{ kind: string; outcome: string | null; reason_codes: string[]; runs: number }[]>`
    select kind, outcome, coalesce(reason_codes, '{}') as reason_codes, count(*)::int as runs from runs where ${where}
    group by kind, outcome, coalesce(reason_codes, '{}')`;
  return {
    byOutcomeAndReasons: combos.map((r) => ({
      kind: r.kind,
      outcome: r.outcome,
      reasonCodes: r.reason_codes,
      runs: r.runs,
    })),
    total: byKind.reduce((s, r) => s + r.runs, 0),
    byKind: byKind.map((r) => ({ ...r })),
    byOutcome: byOutcome.map((r) => ({ ...r })),
    byReasonCode: byReason.map((r) => ({ kind: r.kind, reasonCode: r.reason_code, runs: r.runs })),
  };
}
