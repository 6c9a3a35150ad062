import type { AnyStateMachine } from "xstate";
import { pureInitialTransition, pureTransition } from "../../driver/pure";
import type { Database } from "../../storage/db";
import { listMachineEventsAfter } from "../../storage/machine-events";
import { snapshotsChangedSince, type SnapshotView } from "../../storage/operator-snapshots";
import type { MachineEntry } from "../../visualizations/catalog";
import type { RunWaker } from "../run-waker";

/**
 * Live inspection with Stately's inspector (STATELY_INSPECT=true). Our machines never run as
 * actors — every turn is a pure `transition()` whose snapshot is committed to PostgreSQL — so
 * there is no actor to pass `inspect:` to. Instead this bridge reads what every turn logs to
 * `machine_events` (the events the machine was given, in order, with the definition that took
 * them) and replays them through the same pure machine: each real machine event becomes one
 * `@xstate.event` and the snapshot it led to one `@xstate.snapshot`, reported with
 * `@statelyai/inspect`'s `createInspector`. The events reach the browser over SSE from this
 * server (GET /v1/inspect/events); /inspector.html relays them into the Stately inspector UI.
 *
 * It wakes when a turn ends (RunWaker: this process's runs, and on PostgreSQL the runs other
 * processes announce); a slow fallback read (STATELY_INSPECT_FALLBACK_MS, 5 s) picks up turns of
 * other processes that were not announced.
 */

export type InspectionEvent = Record<string, unknown> & { type: string; sessionId?: string };
type Listener = (e: InspectionEvent, tenantId: string) => void;

export interface InspectorBridge {
  /** Events so far (the last BUFFER), then live ones. Returns an unsubscribe function. */
  subscribe(fn: Listener): () => void;
  /** Resolves once the inspector package is loaded and the first read ran. */
  ready: Promise<void>;
  /** Machine events reported so far (for tests and the page). */
  readonly reported: number;
  stop(): void;
}

const BUFFER = 500;

/** Where one snapshot key's log has been replayed to. */
interface Followed {
  seq: number;
  machine: AnyStateMachine | null;
  snapshot: unknown;
  /** Last reported position of each derived actor (its JSON), so unchanged ones are not re-sent. */
  positions: Map<string, string>;
  broken: boolean;
}

/** The machine definition a log label names (http/routes/operator-replay.ts `definitionOf` over the systems list). */
export type DefinitionOf = (
  tenantId: string,
  label: string | null,
  storedMachineId: string,
) => Promise<AnyStateMachine | null>;

/** `catalog` lists a tenant's machine diagrams (driver/system.ts `machineCatalog` over the systems list). */
export function startInspectorBridge(
  deps: { db: Database; log: (l: string) => void; waker?: RunWaker },
  env: Record<string, string | undefined>,
  catalog: (tenantId: string) => Promise<MachineEntry[]>,
  definitionOf: DefinitionOf,
): InspectorBridge {
  const sql = deps.db.sql;
  const listeners = new Set<Listener>();
  const buffer: { e: InspectionEvent; tenantId: string }[] = [];
  // Which tenant each inspected actor belongs to: a subscriber sees only its own tenant's.
  const tenantOf = new Map<string, string>();
  const versions = new Map<string, number>();
  const followed = new Map<string, Followed>();
  const fallbackMs = Number(env.STATELY_INSPECT_FALLBACK_MS ?? 5_000) || 5_000;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let reported = 0;
  const seen = new Set<string>();
  // Start from now: the inspector shows conversations that move from now on (each from its first event).
  let since = new Date();
  let unsubscribeWaker: (() => void) | null = null;

  const fanOut = (e: InspectionEvent) => {
    const tenantId = tenantOf.get(String(e.sessionId)) ?? "";
    buffer.push({ e, tenantId });
    if (buffer.length > BUFFER) buffer.shift();
    for (const l of listeners) l(e, tenantId);
  };

  const ready = (async () => {
    const { createInspector } = await import("@statelyai/inspect");
    const inspector = createInspector({ send: (e) => fanOut(e as unknown as InspectionEvent) }, { autoStart: true });
    const catalogs = new Map<string, { entries: MachineEntry[] }>();
    const catalogFor = async (tenantId: string) => {
      let c = catalogs.get(tenantId);
      if (!c) catalogs.set(tenantId, (c = { entries: await catalog(tenantId) }));
      return c;
    };
    const built = new Map<string, AnyStateMachine>();

    /** Reports one replayed snapshot of `row.key` (after `event`, or the initial one). */
    const report = async (
      row: SnapshotView,
      f: Followed,
      persisted: { value?: unknown; context?: Record<string, unknown>; status?: string },
      event: { type: string } | null,
    ) => {
      const { entries } = await catalogFor(row.tenantId);
      for (const entry of entries.filter((e) => e.snapshotMachineId === row.machineId)) {
        const pos = entry.position(persisted, row.key);
        if (!pos) continue;
        const main = entry.id === row.machineId;
        // One inspected actor per conversation and machine; the derived step machine beside its dialogue.
        const actorId = main ? row.key : `${row.key}/${entry.id}`;
        tenantOf.set(actorId, row.tenantId);
        const snap = {
          status: (persisted.status ?? "active") as "active",
          value: pos.value,
          context: persisted.context ?? {},
        };
        if (!seen.has(actorId)) {
          seen.add(actorId);
          let m = built.get(`${row.tenantId}|${entry.id}`);
          if (!m) built.set(`${row.tenantId}|${entry.id}`, (m = entry.build()));
          // 0.7.2 reads the definition from actorRef.logic.config only (info.definition is ignored),
          // so the actor is described the way a running actor would be.
          const ref = { sessionId: actorId, id: actorId, logic: { config: m.config } };
          inspector.actor(ref as never, snap);
          f.positions.set(actorId, JSON.stringify(pos.value));
          continue;
        }
        if (!event) continue;
        if (main) {
          inspector.event(actorId, event);
          inspector.snapshot(actorId, snap, { event });
        } else if (f.positions.get(actorId) !== JSON.stringify(pos.value)) {
          // A derived machine moves only when its position changed; the event is the dialogue's.
          inspector.snapshot(actorId, snap, { event });
        }
        f.positions.set(actorId, JSON.stringify(pos.value));
      }
    };

    /** Replays the key's new log rows through the machine that took them, reporting each. */
    const follow = async (row: SnapshotView) => {
      let f = followed.get(row.key);
      if (!f)
        followed.set(row.key, (f = { seq: 0, machine: null, snapshot: null, positions: new Map(), broken: false }));
      if (f.broken) return;
      const definitions = new Map<string | null, AnyStateMachine | null>();
      for (;;) {
        const log = await listMachineEventsAfter(sql, row.key, row.conversationId, f.seq);
        if (log.length === 0) return;
        for (const entry of log) {
          if (!definitions.has(entry.machine))
            definitions.set(entry.machine, await definitionOf(row.tenantId, entry.machine, row.machineId));
          const m = definitions.get(entry.machine);
          const ev = entry.event as { type?: string; input?: unknown };
          if (!m || (f.machine === null && ev?.type !== "xstate.init")) {
            // A log this process cannot replay (a definition it does not have, a log older than labels).
            f.broken = true;
            deps.log(
              `inspector: ${row.key} cannot be replayed from its log (${m ? "no xstate.init" : `machine ${entry.machine ?? "(unnamed)"} not available`})`,
            );
            return;
          }
          let event: { type: string } | null = null;
          if (f.machine === null) [f.snapshot] = pureInitialTransition(m, ev.input as never);
          else {
            if (m !== f.machine)
              f.snapshot = m.resolveState(
                JSON.parse(JSON.stringify(f.machine.getPersistedSnapshot(f.snapshot as never))) as never,
              );
            [f.snapshot] = pureTransition(m, f.snapshot as never, ev as never);
            event = ev as { type: string };
          }
          f.machine = m;
          f.seq = entry.seq;
          reported++;
          await report(row, f, JSON.parse(JSON.stringify(m.getPersistedSnapshot(f.snapshot as never))), event);
        }
      }
    };

    const read = async () => {
      const rows = await snapshotsChangedSince(sql, since);
      for (const row of rows) {
        since = row.updatedAt;
        // The cursor has millisecond precision and the column microseconds: a row can come twice.
        if (versions.get(row.key) === row.rowVersion) continue;
        versions.set(row.key, row.rowVersion);
        await follow(row);
      }
    };

    // One read at a time; a wake during a read asks for one more right after it.
    let running: Promise<void> | null = null;
    let again = false;
    let failures = 0;
    const wake = (): Promise<void> => {
      if (stopped) return Promise.resolve();
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          try {
            await read();
            failures = 0;
          } catch (e) {
            // A closed database (process shutting down, a test's pool ended) ends the bridge.
            if (++failures >= 5) {
              deps.log(`inspector bridge stopped: ${(e as Error).message}`);
              stop();
              return;
            }
          }
        } while (again && !stopped);
      })().finally(() => {
        running = null;
        arm();
      });
      return running;
    };
    const arm = () => {
      if (stopped) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => void wake(), fallbackMs);
      timer.unref();
    };
    unsubscribeWaker = deps.waker?.onAnyRun(() => void wake()) ?? null;
    await wake();
    deps.log("Stately inspector bridge on: open /inspector.html");
  })();
  ready.catch((e) => deps.log(`Stately inspector bridge could not start: ${(e as Error).message}`));

  function stop() {
    stopped = true;
    if (timer) clearTimeout(timer);
    unsubscribeWaker?.();
    listeners.clear();
  }

  return {
    ready,
    get reported() {
      return reported;
    },
    subscribe(fn) {
      for (const b of buffer) fn(b.e, b.tenantId);
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    stop,
  };
}
