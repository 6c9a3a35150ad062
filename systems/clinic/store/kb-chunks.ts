import type { Tx } from "../../../storage/db";

/** The chunks of one knowledge-base document as indexed (the Отладка page lists them). */
export interface KbChunk {
  ord: number;
  heading: string;
  text: string;
}

export async function listChunks(sql: Tx, tenantId: string, documentId: string): Promise<KbChunk[]> {
  return sql<KbChunk[]>`
    select ord, heading, text from clinic_kb_chunks
    where tenant_id = ${tenantId} and document_id = ${documentId}
    order by ord`;
}
