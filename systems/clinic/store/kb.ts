import type { Tx } from "../../../storage/db";

/** The clinic knowledge base: documents, their chunks, and russian full-text search over chunks. */

export interface KbDocument {
  id: string;
  title: string;
  body: string;
  branch: string | null;
  version: number;
  chunkCount: number;
  updatedAt: Date;
}

export interface KbHit {
  docId: string;
  heading: string;
  text: string;
  score: number;
}

export async function upsertDocument(
  tx: Tx,
  tenantId: string,
  d: { id: string; title: string; body: string; branch: string | null },
): Promise<number> {
  const [row] = await tx<{ version: number }[]>`
    insert into clinic_kb_documents (tenant_id, id, title, body, branch)
    values (${tenantId}, ${d.id}, ${d.title}, ${d.body}, ${d.branch})
    on conflict (tenant_id, id) do update
      set title = excluded.title, body = excluded.body, branch = excluded.branch,
          version = clinic_kb_documents.version + 1, updated_at = now()
    returning version`;
  return row!.version;
}

/**
 * Re-indexing: the document's chunks are replaced as a whole. The document's row is locked
 * first, so concurrent re-indexes, uploads and a delete of one document take turns (delete then
 * insert raced into duplicate chunk keys, or chunks of a deleted document: a 500 on the server).
 * False when the document is gone. `tx` must be a transaction.
 */
export async function replaceChunks(
  tx: Tx,
  tenantId: string,
  documentId: string,
  chunks: { ord: number; heading: string; text: string }[],
): Promise<boolean> {
  const held =
    await tx`select 1 from clinic_kb_documents where tenant_id = ${tenantId} and id = ${documentId} for update`;
  if (held.length === 0) return false;
  await tx`delete from clinic_kb_chunks where tenant_id = ${tenantId} and document_id = ${documentId}`;
  if (chunks.length === 0) return true;
  const rows = chunks.map((c) => ({
    tenant_id: tenantId,
    document_id: documentId,
    ord: c.ord,
    heading: c.heading,
    text: c.text,
  }));
  await tx`insert into clinic_kb_chunks ${tx(rows, "tenant_id", "document_id", "ord", "heading", "text")}`;
  return true;
}

type RawDoc = {
  id: string;
  title: string;
  body: string;
  branch: string | null;
  version: number;
  updated_at: Date;
  chunk_count: number;
};
const doc = (r: RawDoc): KbDocument => ({
  id: r.id,
  title: r.title,
  body: r.body,
  branch: r.branch,
  version: r.version,
  chunkCount: Number(r.chunk_count),
  updatedAt: r.updated_at,
});

export async function getDocument(sql: Tx, tenantId: string, id: string): Promise<KbDocument | null> {
  const rows = await sql<RawDoc[]>`
    select d.id, d.title, d.body, d.branch, d.version, d.updated_at,
           (select count(*)::int from clinic_kb_chunks c where c.tenant_id = d.tenant_id and c.document_id = d.id) as chunk_count
    from clinic_kb_documents d where d.tenant_id = ${tenantId} and d.id = ${id}`;
  return rows[0] ? doc(rows[0]) : null;
}

export async function listDocuments(sql: Tx, tenantId: string): Promise<KbDocument[]> {
  const rows = await sql<RawDoc[]>`
    select d.id, d.title, d.body, d.branch, d.version, d.updated_at,
           (select count(*)::int from clinic_kb_chunks c where c.tenant_id = d.tenant_id and c.document_id = d.id) as chunk_count
    from clinic_kb_documents d where d.tenant_id = ${tenantId} order by d.id`;
  return rows.map(doc);
}

export async function deleteDocument(sql: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await sql`delete from clinic_kb_documents where tenant_id = ${tenantId} and id = ${id}`;
  return r.count > 0;
}

/**
 * Chunks ranked by ts_rank_cd against an OR of the query's russian lexemes: a patient's
 * question rarely shares every word with the answer, so AND semantics would find nothing.
 */
export async function searchChunks(
  sql: Tx,
  tenantId: string,
  query: string,
  o: { branch?: string | null; limit?: number } = {},
): Promise<KbHit[]> {
  const branch = o.branch ?? null;
  const rows = await sql<{ document_id: string; heading: string; text: string; score: number }[]>`
    with q as (
      -- Lexemes are already stemmed: cast them straight to a tsquery instead of stemming twice.
      select array_to_string(array(select quote_literal(l) from unnest(tsvector_to_array(to_tsvector('russian', ${query}))) l), ' | ')::tsquery as query
    )
    select c.document_id, c.heading, c.text, ts_rank_cd(c.tsv, q.query)::float8 as score
    from clinic_kb_chunks c
    join clinic_kb_documents d on d.tenant_id = c.tenant_id and d.id = c.document_id
    cross join q
    where c.tenant_id = ${tenantId} and c.tsv @@ q.query
      and (d.branch is null or ${branch}::text is null or d.branch = ${branch}::text)
    order by score desc, c.document_id, c.ord
    limit ${o.limit ?? 3}`;
  return rows.map((r) => ({ docId: r.document_id, heading: r.heading, text: r.text, score: Number(r.score) }));
}
