import type { RunEventRow } from "../storage/runs";

type Listener = (e: RunEventRow) => void;

export interface LiveRun {
  id: string;
  /** Every event emitted so far, in order: a same-process follower fills gaps from here. */
  events: RunEventRow[];
  ended: boolean;
}

/**
 * In-process fan-out of live run events. Followers on other processes read the
 * database instead (the live process flushes events there while the run goes on).
 */
export class RunHub {
  private live = new Map<string, LiveRun>();
  private listeners = new Map<string, Set<Listener>>();

  open(id: string): LiveRun {
    const r: LiveRun = { id, events: [], ended: false };
    this.live.set(id, r);
    return r;
  }

  /** Drops a run that never streamed (refused before its stream opened). */
  forget(id: string): void {
    this.live.delete(id);
    this.listeners.delete(id);
  }

  get(id: string): LiveRun | undefined {
    return this.live.get(id);
  }

  publish(id: string, e: RunEventRow): void {
    const r = this.live.get(id);
    if (r) {
      r.events.push(e);
      if (e.event === "done") r.ended = true;
    }
    for (const l of this.listeners.get(id) ?? []) l(e);
    // Keep an ended run briefly for late followers, then forget it (the database has it all).
    if (e.event === "done") setTimeout(() => this.live.delete(id), 30_000).unref();
  }

  subscribe(id: string, l: Listener): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(l);
    return () => {
      set!.delete(l);
      if (set!.size === 0) this.listeners.delete(id);
    };
  }

  followers(id: string): number {
    return this.listeners.get(id)?.size ?? 0;
  }

  liveIds(): string[] {
    return [...this.live.values()].filter((r) => !r.ended).map((r) => r.id);
  }
}
