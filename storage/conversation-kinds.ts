import type { Sql } from "./db";

/**
 * The conversation kinds the database accepts (`conversation_kinds`, migration 000045): the
 * server adds those of the systems it serves at start (http/start.ts, from the systems list's
 * `kinds`). Idempotent, so processes starting together over one database do not conflict; a
 * kind is never removed here (stored conversations may still have it).
 */
export async function registerConversationKinds(sql: Sql, kinds: readonly string[]): Promise<void> {
  if (kinds.length === 0) return;
  await sql`insert into conversation_kinds (kind) select unnest(${kinds as string[]}::text[]) on conflict do nothing`;
}

/** The kinds the database accepts now. */
export async function acceptedConversationKinds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ kind: string }[]>`select kind from conversation_kinds order by kind`;
  return rows.map((r) => r.kind);
}
