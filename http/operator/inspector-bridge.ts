import type { AnyStateMachine } from "xstate";
import type { Database } from "../../storage/db";
import { snapshotsChangedSince } from "../../storage/operator-snapshots";
import type { MachineEntry } from "../../visualizations/catalog";

/**
 * Live inspection with Stately's inspector (STATELY_INSPECT=true). Our machines never run as
 * actors — every turn is a pure `transition()` whose snapshot is committed to PostgreSQL — so
 * there is no actor to pass `inspect:` to. Instead this bridge follows the snapshots as they are
 * written (polling machine_snapshots, so it sees every gateway process's turns), and reports
 * each conversation as an actor to `@statelyai/inspect`'s `createInspector`. The events reach the
 * browser over SSE from this same server (GET /v1/inspect/events); /inspector.html relays them
 * into the Stately inspector UI, which the browser loads from stately.ai.
 */

export type InspectionEvent = Record<string, unknown> & { type: string; sessionId?: string };
type Listener = (e: InspectionEvent, tenantId: string) => void;

export interface InspectorBridge {
  /** Events so far (the last BUFFER), then live ones. Returns an unsubscribe function. */
  subscribe(fn: Listener): () => void;
  /** Resolves once the inspector package is loaded and the first poll ran. */
  ready: Promise<void>;
  stop(): void;
}

const BUFFER = 500;

/** `catalog` lists a tenant's machine diagrams (driver/system.ts `machineCatalog` over the systems list). */
export function startInspectorBridge(deps: { db: Database; log: (l: string) => void }, env: Record<string, string | undefined>, catalog: (tenantId: string) => Promise<MachineEntry[]>): InspectorBridge {
  const listeners = new Set<Listener>();
  const buffer: { e: InspectionEvent; tenantId: string }[] = [];
  // Which tenant each inspected actor belongs to: a subscriber sees only its own tenant's.
  const tenantOf = new Map<string, string>();
  const versions = new Map<string, number>();
  const pollMs = Number(env.STATELY_INSPECT_POLL_MS ?? 500) || 500;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const seen = new Set<string>();
  // Start from now: the inspector shows conversations as they move, not the whole history.
  let since = new Date();

  const fanOut = (e: InspectionEvent) => {
    const tenantId = tenantOf.get(String(e.sessionId)) ?? "";
    buffer.push({ e, tenantId });
    if (buffer.length > BUFFER) buffer.shift();
    for (const l of listeners) l(e, tenantId);
  };

  const ready = (async () => {
    const { createInspector } = await import("@statelyai/inspect");
    const inspector = createInspector({ send: (e) => fanOut(e as unknown as InspectionEvent) }, { autoStart: true });
    const catalogs = new Map<string, MachineEntry[]>();
    const entriesFor = async (tenantId: string) => {
      let c = catalogs.get(tenantId);
      if (!c) catalogs.set(tenantId, (c = await catalog(tenantId)));
      return c;
    };
    const machines = new Map<string, AnyStateMachine>();
    const poll = async () => {
      const rows = await snapshotsChangedSince(deps.db.sql, since);
      for (const row of rows) {
        since = row.updatedAt;
        // The cursor has millisecond precision and the column microseconds: a row can come twice.
        if (versions.get(row.key) === row.rowVersion) continue;
        versions.set(row.key, row.rowVersion);
        for (const entry of (await entriesFor(row.tenantId)).filter((e) => e.snapshotMachineId === row.machineId)) {
          const pos = entry.position(row.snapshot, row.key);
          if (!pos) continue;
          // One inspected actor per conversation and machine; the derived step machine beside its dialogue.
          const actorId = entry.id === row.machineId ? row.key : `${row.key}/${entry.id}`;
          tenantOf.set(actorId, row.tenantId);
          const snap = { status: (row.snapshot.status ?? "active") as "active", value: pos.value, context: row.snapshot.context ?? {} };
          if (!seen.has(actorId)) {
            seen.add(actorId);
            let m = machines.get(`${row.tenantId}|${entry.id}`);
            if (!m) machines.set(`${row.tenantId}|${entry.id}`, (m = entry.build()));
            // 0.7.2 reads the definition from actorRef.logic.config only (info.definition is ignored),
            // so the actor is described the way a running actor would be.
            const ref = { sessionId: actorId, id: actorId, logic: { config: m.config } };
            inspector.actor(ref as never, snap);
          } else {
            inspector.event(actorId, { type: `turn (row_version ${row.rowVersion})` });
            inspector.snapshot(actorId, snap, { event: { type: `turn (row_version ${row.rowVersion})` } });
          }
        }
      }
    };
    let failures = 0;
    const tick = async () => {
      if (stopped) return;
      try {
        await poll();
        failures = 0;
      } catch (e) {
        // A closed database (process shutting down, a test's pool ended) ends the bridge.
        if (++failures >= 5) {
          deps.log(`inspector bridge stopped: ${(e as Error).message}`);
          stopped = true;
          return;
        }
      }
      timer = setTimeout(tick, pollMs);
      timer.unref();
    };
    await poll().catch(() => {});
    timer = setTimeout(tick, pollMs);
    timer.unref();
    deps.log("Stately inspector bridge on: open /inspector.html");
  })();
  ready.catch((e) => deps.log(`Stately inspector bridge could not start: ${(e as Error).message}`));

  return {
    ready,
    subscribe(fn) {
      for (const b of buffer) fn(b.e, b.tenantId);
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      listeners.clear();
    },
  };
}
