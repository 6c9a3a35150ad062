import { createHmac } from "node:crypto";
import type { Database } from "../storage/db";
import { claimDue, markDelivered, markFailed, type OutboxRow } from "../storage/outbox";

/**
 * Delivers the outbox (storage/outbox.ts) to WEBHOOK_URL: one POST per row, the JSON body signed
 * with HMAC-SHA256 over "<timestamp>.<body>" (header X-Webhook-Signature: sha256=<hex>), retried
 * with exponential backoff, a dead letter after the last attempt. Woken after a turn commits
 * (`kick`) and by a timer for the retries; a receiver deduplicates by X-Webhook-Id.
 */

export interface WebhookConfig {
  url?: string;
  secret?: string;
  maxAttempts: number;
  /** The first retry waits this long; each next one twice as long. */
  backoffMs: number;
  timeoutMs: number;
}

export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
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
    if (!this.enabled || this.timer) return;
    // Retries come due while nobody kicks: look again at the backoff's own pace.
    this.timer = setInterval(() => this.kick(), Math.max(50, Math.min(this.config.backoffMs, 5_000)));
    this.timer.unref();
    this.kick();
  }

  /** Deliver what is due now (called after a commit that wrote outbox rows). */
  kick(): void {
    if (!this.enabled || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((e) => this.log(`webhook: outbox pass failed: ${(e as Error).message}`))
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async pass(): Promise<void> {
    for (;;) {
      const due = await claimDue(this.db.sql, 10, this.config.timeoutMs * 2);
      if (due.length === 0) return;
      await Promise.all(due.map((row) => this.deliver(row)));
      if (this.stopped) return;
    }
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const attempt = row.attempts + 1;
    const body = JSON.stringify({ id: row.id, event: row.event, ...row.payload });
    const timestamp = String(Math.floor(Date.now() / 1000));
    let error: string | null = null;
    try {
      const r = await fetch(this.config.url!, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-webhook-id": row.id,
          "x-webhook-event": row.event,
          "x-webhook-timestamp": timestamp,
          "x-webhook-attempt": String(attempt),
          "x-webhook-signature": signWebhook(this.config.secret ?? "", timestamp, body),
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
    const last = attempt >= this.config.maxAttempts;
    await markFailed(this.db.sql, row.id, attempt, error, last ? null : this.config.backoffMs * 2 ** (attempt - 1));
    this.log(
      `webhook: delivery ${row.id} (${row.event}) attempt ${attempt}/${this.config.maxAttempts} failed: ${error}${last ? " — moved to webhook_dead_letters" : ""}`,
    );
  }
}
