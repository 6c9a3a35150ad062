import type { HandlingKind } from "../contract/inbox-tools";
import type { Database } from "../storage/db";
import { publishOnChannel } from "../storage/desk-notify";
import { genitive } from "./genitive";
import type { RunWaker } from "./run-waker";

/**
 * Who has a thread open and who is typing in it (issue 43 item 4): ephemeral — in this
 * process's memory only, never stored, never in a thread's event log. A heartbeat (POST
 * …/presence) keeps an operator's signal alive for `ttlMs`; without one it expires and the
 * change is fanned out. Other processes hear of each heartbeat on the channel live events use
 * (LISTEN/NOTIFY on a PostgreSQL server, http/run-waker.ts) and keep their own copy with their
 * own expiry; on embedded PGlite there is one process, so the local fan-out is all there is.
 */

export type PresenceState = "viewing" | "typing" | "left";
export interface ThreadPresence {
  conversationId: string;
  viewing: string[];
  typing: string[];
  /** Each viewer's name in the genitive («открыто у Ивана»). */
  genitive: Record<string, string>;
}
/** What the desk's followers get: a presence change, or news of a reminder, a note or a change of hands (ids only). */
export type DeskNews =
  | { tenantId: string; event: "presence"; data: ThreadPresence }
  | { tenantId: string; event: "handling"; data: { conversationId: string; kind: HandlingKind } }
  | { tenantId: string; event: "reminder"; data: { conversationId: string; kind: string } }
  | { tenantId: string; event: "note"; data: { conversationId: string; id: string; author: string } };

const PREFIX = "presence:";
type Wire =
  | { i: string; k: "beat"; t: string; c: string; o: string; s: PresenceState }
  | { i: string; k: "news"; n: Exclude<DeskNews, { event: "presence" }> };

interface Entry {
  state: "viewing" | "typing";
  expires: number;
}

export class PresenceBoard {
  /** `tenant|conversation` → operator → signal. */
  private threads = new Map<string, Map<string, Entry>>();
  private listeners = new Set<(n: DeskNews) => void>();
  private timer: NodeJS.Timeout | null = null;
  private nextExpiry = Infinity;

  private listening = false;

  constructor(
    private readonly ttlMs: number,
    private readonly instanceId: string,
    private readonly remote: { publish(payload: string): Promise<void>; listen(): void } | null,
  ) {}

  /** Hears other processes from the first use on (a server nobody uses presence on opens no LISTEN). */
  private join(): void {
    if (this.listening || !this.remote) return;
    this.listening = true;
    this.remote.listen();
  }

  /** An operator's heartbeat here (published to other processes too); returns the thread's presence after it. */
  beat(tenantId: string, conversationId: string, operator: string, state: PresenceState): ThreadPresence {
    this.join();
    this.apply(tenantId, conversationId, operator, state);
    this.send({ i: this.instanceId, k: "beat", t: tenantId, c: conversationId, o: operator, s: state });
    return this.of(tenantId, conversationId);
  }

  /** News for every desk follower of the tenant, here and in other processes. */
  announce(n: Exclude<DeskNews, { event: "presence" }>): void {
    this.emit(n);
    this.send({ i: this.instanceId, k: "news", n });
  }

  /** A payload heard on the channel (RunWaker.onPrefixed). */
  receive(payload: string): void {
    let w: Wire;
    try {
      w = JSON.parse(payload.slice(PREFIX.length)) as Wire;
    } catch {
      return;
    }
    if (w.i === this.instanceId) return;
    if (w.k === "beat") this.apply(w.t, w.c, w.o, w.s);
    else if (w.k === "news") this.emit(w.n);
  }

  of(tenantId: string, conversationId: string): ThreadPresence {
    const now = Date.now();
    const viewing: string[] = [];
    const typing: string[] = [];
    for (const [operator, e] of this.threads.get(`${tenantId}|${conversationId}`) ?? []) {
      if (e.expires <= now) continue;
      viewing.push(operator);
      if (e.state === "typing") typing.push(operator);
    }
    viewing.sort();
    return {
      conversationId,
      viewing,
      typing: typing.sort(),
      genitive: Object.fromEntries(viewing.map((n) => [n, genitive(n)])),
    };
  }

  /** A thread's presence by its id alone (conversation ids are unique across tenants): the patient's stream. */
  ofConversation(conversationId: string): ThreadPresence {
    for (const key of this.threads.keys())
      if (key.endsWith(`|${conversationId}`)) return this.of(key.slice(0, -conversationId.length - 1), conversationId);
    return { conversationId, viewing: [], typing: [], genitive: {} };
  }

  /** Every thread of the tenant somebody has open. */
  all(tenantId: string): ThreadPresence[] {
    const out: ThreadPresence[] = [];
    for (const key of this.threads.keys()) {
      const [t, c] = key.split("|") as [string, string];
      if (t !== tenantId) continue;
      const p = this.of(t, c);
      if (p.viewing.length) out.push(p);
    }
    return out;
  }

  subscribe(fn: (n: DeskNews) => void): () => void {
    this.join();
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  private apply(tenantId: string, conversationId: string, operator: string, state: PresenceState): void {
    const key = `${tenantId}|${conversationId}`;
    const before = this.of(tenantId, conversationId);
    let m = this.threads.get(key);
    if (state === "left") m?.delete(operator);
    else {
      if (!m) this.threads.set(key, (m = new Map()));
      m.set(operator, { state, expires: Date.now() + this.ttlMs });
      this.schedule(Date.now() + this.ttlMs);
    }
    if (m?.size === 0) this.threads.delete(key);
    const after = this.of(tenantId, conversationId);
    if (!samePresence(before, after)) this.emit({ tenantId, event: "presence", data: after });
  }

  /** One timer, at the earliest expiry: a signal without a heartbeat goes, and its followers are told. */
  private schedule(at: number): void {
    if (at >= this.nextExpiry && this.timer) return;
    if (this.timer) clearTimeout(this.timer);
    this.nextExpiry = at;
    this.timer = setTimeout(() => this.expire(), Math.max(0, at - Date.now()) + 5);
    this.timer.unref();
  }

  private expire(): void {
    this.timer = null;
    this.nextExpiry = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [key, m] of [...this.threads]) {
      let changed = false;
      for (const [operator, e] of [...m]) {
        if (e.expires <= now) {
          m.delete(operator);
          changed = true;
        } else next = Math.min(next, e.expires);
      }
      if (m.size === 0) this.threads.delete(key);
      if (changed) {
        const [t, c] = key.split("|") as [string, string];
        this.emit({ tenantId: t, event: "presence", data: this.of(t, c) });
      }
    }
    if (next < Infinity) this.schedule(next);
  }

  private emit(n: DeskNews): void {
    for (const fn of [...this.listeners]) fn(n);
  }

  private send(w: Wire): void {
    // Lost news is harmless: the next heartbeat (every few seconds) carries the same state.
    this.remote?.publish(PREFIX + JSON.stringify(w)).catch(() => {});
  }
}

const samePresence = (a: ThreadPresence, b: ThreadPresence) =>
  a.viewing.join("\n") === b.viewing.join("\n") && a.typing.join("\n") === b.typing.join("\n");

const boards = new WeakMap<object, PresenceBoard>();

/**
 * Every desk of the tenant hears that a thread changed hands (after the change committed): an
 * operator's action, a patient's turn that escalated, the sweep putting a silent thread back in
 * the queue. The inbox draws its list again at once instead of at its next poll.
 */
export function announceHandling(
  deps: Parameters<typeof presenceOf>[0],
  tenantId: string,
  conversationId: string,
  kind: HandlingKind,
): void {
  presenceOf(deps).announce({ tenantId, event: "handling", data: { conversationId, kind } });
}

/**
 * The process's board for these deps (one per server: the routes, the patient's thread stream and
 * the reminder sweep share it), listening to other processes on a PostgreSQL server.
 */
export function presenceOf(deps: {
  db: Database;
  waker: RunWaker;
  instanceId: string;
  config: { desk: { presenceTtlMs: number } };
}): PresenceBoard {
  let b = boards.get(deps);
  if (!b) {
    const sql = deps.db.sql;
    const board: PresenceBoard = new PresenceBoard(
      deps.config.desk.presenceTtlMs,
      deps.instanceId,
      deps.db.backend === "postgres"
        ? {
            publish: (p) => publishOnChannel(sql, p),
            listen: () => void deps.waker.onPrefixed(PREFIX, (p) => board.receive(p)),
          }
        : null,
    );
    b = board;
    boards.set(deps, b);
  }
  return b;
}
