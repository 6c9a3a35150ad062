import { createHmac, randomInt } from "node:crypto";
import type { Database } from "../storage/db";
import { claimDue, markDelivered, markFailed, nextDueInMs, type OutboxRow } from "../storage/outbox";

/**
 * Delivers the outbox (storage/outbox.ts) to WEBHOOK_URL in the Standard Webhooks shape
 * (https://www.standardwebhooks.com): one POST per row with `webhook-id` (the row's id, the
 * receiver's deduplication key), `webhook-timestamp` (seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the `whsec_` secret), so a
 * receiver verifies with any stock library. Durable (issue 47 item 2): a failed delivery is
 * retried with capped exponential back-off and jitter until its retry horizon (hours) has
 * passed, then it is a dead letter, listed and re-deliverable (http/routes/webhooks.ts). One
 * conversation's events go one at a time, in `seq` order (claimDue takes only a conversation's
 * first pending row). Woken after a turn commits (`kick`), and otherwise asleep until the earliest
 * pending row comes due (a retry's back-off or a lease left by a process that died), with a
 * safety look every `IDLE_LOOK_MS` for rows another process wrote without kicking this one.
 */

/** How long an idle dispatcher sleeps before it looks at the outbox anyway. */
const IDLE_LOOK_MS = 30_000;

export interface WebhookConfig {
  url?: string;
  secret?: string;
  /** A delivery is dead after this many attempts (unset: only the horizon ends it). */
  maxAttempts?: number;
  /** The first retry waits about this long; each next one twice as long, up to `backoffMaxMs`. */
  backoffMs: number;
  backoffMaxMs: number;
  /** How long a delivery is retried, counted from its creation (or its re-delivery). */
  retryHorizonMs: number;
  timeoutMs: number;
}

/** The signing key: a `whsec_` secret is base64 (Standard Webhooks); any other is used as its UTF-8 bytes. */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice("whsec_".length), "base64") : Buffer.from(secret);
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, the value of the `webhook-signature` header. */
export function signWebhook(secret: string, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac("sha256", webhookKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/**
 * The wait before attempt `attempt + 1`: base·2^(attempt−1), capped, then "equal jitter" (half
 * fixed, half random), so receivers coming back from an outage are not hit by every sender at
 * the same instant.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(exp / 2 + random() * (exp / 2));
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly config: WebhookConfig,
    private readonly log: (line: string) => void,
  ) {}

  get enabled(): boolean {
    return !!this.config.url;
  }

  start(): void {
    if (!this.enabled || this.started) return;
    this.started = true;
    this.kick();
  }

  /** One timer for the next look: at the earliest due row, at most IDLE_LOOK_MS away. */
  private sleepFor(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(), Math.min(IDLE_LOOK_MS, Math.max(20, ms)));
    this.timer.unref();
  }

  /** Deliver what is due now (called after a commit that wrote outbox rows, and after a re-delivery). */
  kick(): void {
    if (!this.enabled || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((e) => {
        this.log(`webhook: outbox pass failed: ${(e as Error).message}`);
        // The database is away: look again at the back-off's pace, not at once and not in 30 s.
        return this.config.backoffMs;
      })
      .then((nextMs) => {
        this.running = null;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.kick();
          return;
        }
        this.sleepFor(nextMs ?? IDLE_LOOK_MS);
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Delivers what is due; returns how long until the next pending row is due (null: none pending). */
  private async pass(): Promise<number | null> {
    for (;;) {
      // At most one row per conversation: the rows of different conversations go in parallel.
      const due = await claimDue(this.db.sql, 10, this.config.timeoutMs * 2);
      if (due.length === 0) return nextDueInMs(this.db.sql);
      await Promise.all(due.map((row) => this.deliver(row)));
      if (this.stopped) return null;
    }
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const attempt = row.attempts + 1;
    // `seq` last: the conversation's delivery number wins over any field of the payload.
    const body = JSON.stringify({ id: row.id, event: row.event, ...row.payload, seq: row.seq });
    const timestamp = String(Math.floor(Date.now() / 1000));
    let error: string | null = null;
    try {
      const r = await fetch(this.config.url!, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": row.id,
          "webhook-timestamp": timestamp,
          "webhook-signature": signWebhook(this.config.secret ?? "", row.id, timestamp, body),
        },
        body,
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
      await r.body?.cancel().catch(() => {});
      if (!r.ok) error = `HTTP ${r.status}`;
    } catch (e) {
      error = (e as Error).message;
    }
    if (error === null) {
      await markDelivered(this.db.sql, row.id, attempt);
      return;
    }
    const delay = backoffDelay(attempt, this.config.backoffMs, this.config.backoffMaxMs);
    const pastHorizon = Date.now() + delay > row.retryFrom.getTime() + this.config.retryHorizonMs;
    const last = pastHorizon || (this.config.maxAttempts !== undefined && attempt >= this.config.maxAttempts);
    await markFailed(this.db.sql, row.id, attempt, error, last ? null : delay);
    this.log(
      `webhook: delivery ${row.id} (${row.event}, conversation ${row.conversationId} #${row.seq}) attempt ${attempt} failed: ${error}${last ? " — moved to webhook_dead_letters" : `; next in ${delay} ms`}`,
    );
  }
}
