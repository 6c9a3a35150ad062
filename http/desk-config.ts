import { z } from "zod";

/**
 * The operator's desk settings (issue 43 item 4; doc/configuration.md "Operators' desk"): how
 * long presence lives without a heartbeat, and the reminders' deadlines. Minutes may be
 * fractional (tests use a fraction of a second); 0 turns a reminder off.
 */
export interface DeskConfig {
  /** A viewing / typing signal without a heartbeat for this long is gone. */
  presenceTtlMs: number;
  /** An escalation nobody took within this long raises a reminder (null: off). */
  untakenAfterMs: number | null;
  /** A held thread where nobody wrote for this long raises a reminder (null: off). */
  silentAfterMs: number | null;
  /** A silent held thread is also returned to the queue (released, waiting for any operator). */
  requeueSilent: boolean;
  /** How often a process reads due reminders from the database. */
  sweepMs: number;
}

const minutes = z.coerce
  .number()
  .min(0)
  .max(7 * 24 * 60);
const flag = z
  .enum(["true", "false", "1", "0", "yes", "no", "on", "off"])
  .transform((v) => ["true", "1", "yes", "on"].includes(v));
const schema = z.object({
  PRESENCE_TTL_MS: z.coerce.number().int().min(500).max(120_000).default(8_000),
  REMIND_UNTAKEN_AFTER_MIN: minutes.default(10),
  REMIND_SILENT_AFTER_MIN: minutes.default(15),
  REMIND_REQUEUE: flag.default(false),
  REMIND_SWEEP_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
});

const ms = (min: number) => (min > 0 ? Math.max(1, Math.round(min * 60_000)) : null);

/** Reads the desk's variables from the same environment as the rest of the config; a bad value refuses to start. */
export function loadDeskConfig(env: Record<string, string | undefined>): DeskConfig {
  const picked = Object.fromEntries(Object.keys(schema.shape).map((k) => [k, env[k] === "" ? undefined : env[k]]));
  const parsed = schema.safeParse(picked);
  if (!parsed.success)
    throw new Error(
      `Invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  const e = parsed.data;
  return {
    presenceTtlMs: e.PRESENCE_TTL_MS,
    untakenAfterMs: ms(e.REMIND_UNTAKEN_AFTER_MIN),
    silentAfterMs: ms(e.REMIND_SILENT_AFTER_MIN),
    requeueSilent: e.REMIND_REQUEUE,
    sweepMs: e.REMIND_SWEEP_MS,
  };
}
