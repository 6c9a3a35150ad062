import type { Tx } from "./db";
import { RUN_EVENTS_CHANNEL } from "./runs";

/**
 * Publishes an ephemeral payload on the channel live events use (http/run-waker.ts listens to
 * it): the operators' presence crosses processes this way without a row anywhere. PostgreSQL
 * caps a payload at 8,000 bytes; callers send ids and names, never texts.
 */
export async function publishOnChannel(sql: Tx, payload: string): Promise<void> {
  await sql`select pg_notify(${RUN_EVENTS_CHANNEL}, ${payload})`;
}
