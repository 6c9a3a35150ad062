import type postgres from "postgres";
import type { Tx } from "../../../storage/db";
import { isUuid } from "../../../storage/ids";
import { accessCondition, surelyDenied, type ConversationAccess } from "../../../storage/conversation-credentials";

export interface EvidenceRunRow {
  runId: string;
  conversationId: string;
  tenantId: string;
  turn: number;
  question: string;
  outcome: string;
  reasonCodes: string[];
  artifacts: unknown;
}

export async function insertEvidenceRun(tx: Tx, r: EvidenceRunRow): Promise<void> {
  await evidenceRunInsert(tx, r);
}

/** The insert of `insertEvidenceRun`, also as a CTE body of a turn's commit statement: only when `when` holds. */
export function evidenceRunInsert(sql: Tx, r: EvidenceRunRow, when: postgres.Fragment = sql`true`): postgres.Fragment {
  return sql`insert into evidence_runs (run_id, conversation_id, tenant_id, turn, question, outcome, reason_codes, artifacts)
             select ${r.runId}, ${r.conversationId}, ${r.tenantId}, ${r.turn}, ${r.question}, ${r.outcome}, ${r.reasonCodes}, ${sql.json(r.artifacts as never)}
             where ${when}`;
}

/**
 * Tenant-scoped: another tenant's run — or, for a `chat` token, a run of a conversation whose
 * credential the request lacks (`access`, checked in this statement) — is indistinguishable from a missing one.
 */
export async function getEvidenceRun(
  sql: Tx,
  tenantId: string,
  runId: string,
  access: ConversationAccess,
): Promise<EvidenceRunRow | null> {
  if (!isUuid(runId) || surelyDenied(access)) return null;
  const rows = await sql<
    {
      run_id: string;
      conversation_id: string;
      tenant_id: string;
      turn: number;
      question: string;
      outcome: string;
      reason_codes: string[];
      artifacts: unknown;
    }[]
  >`
    select run_id, conversation_id, tenant_id, turn, question, outcome, reason_codes, artifacts from evidence_runs
    where run_id = ${runId} and tenant_id = ${tenantId}
      ${access.any ? sql`` : sql`and exists (select 1 from conversations where conversations.id = evidence_runs.conversation_id ${accessCondition(sql, access)})`}`;
  const r = rows[0];
  return r
    ? {
        runId: r.run_id,
        conversationId: r.conversation_id,
        tenantId: r.tenant_id,
        turn: r.turn,
        question: r.question,
        outcome: r.outcome,
        reasonCodes: r.reason_codes,
        artifacts: r.artifacts,
      }
    : null;
}
