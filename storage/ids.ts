/**
 * Conversation and run ids are UUIDs, stored as `uuid` (migration 000023). An id a client sends in a
 * path or a body that is not one names no row: the repositories that look rows up by such an id
 * answer "not found" without asking PostgreSQL, which would refuse the text as a uuid (22P02).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(id: unknown): id is string {
  return typeof id === "string" && UUID.test(id);
}
