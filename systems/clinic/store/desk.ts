import type { Tx } from "../../../storage/db";
import { DEFAULT_DESK, DeskSettings } from "../desk";

/** The clinic's front-desk settings (migration 000031); no row: the defaults. */
export async function loadDesk(sql: Tx, tenantId: string): Promise<DeskSettings> {
  const [r] = await sql<
    { settings: unknown }[]
  >`select settings from clinic_desk_settings where tenant_id = ${tenantId}`;
  const parsed = DeskSettings.safeParse(r?.settings);
  return parsed.success ? parsed.data : DEFAULT_DESK;
}

export async function saveDesk(sql: Tx, tenantId: string, s: DeskSettings): Promise<void> {
  await sql`
    insert into clinic_desk_settings (tenant_id, settings) values (${tenantId}, ${sql.json(s as never)})
    on conflict (tenant_id) do update set settings = excluded.settings, updated_at = now()`;
}

/**
 * A turn reads the desk on every message: kept in memory for a few seconds per tenant (a change
 * through this process is seen at once; through another, within TTL_MS), so a turn costs no extra
 * round trip.
 */
const TTL_MS = 5_000;
const cache = new Map<string, { at: number; s: DeskSettings }>();

export async function deskOf(sql: Tx, tenantId: string): Promise<DeskSettings> {
  const hit = cache.get(tenantId);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.s;
  const s = await loadDesk(sql, tenantId);
  if (cache.size > 10_000) cache.clear();
  cache.set(tenantId, { at: Date.now(), s });
  return s;
}

export function forgetDesk(tenantId: string): void {
  cache.delete(tenantId);
}
