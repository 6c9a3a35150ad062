import { ANY_ACCESS } from "../../storage/conversation-credentials";
import { Hono } from "hono";
import type { AnyStateMachine } from "xstate";
import { AppError } from "../../driver/errors";
import { parseMachineLabel, replayLog } from "../../driver/replay";
import { replaySpec, type DialogueSystem } from "../../driver/system";
import type { MachineSpec } from "../../driver/machine-spec";
import { findConversation } from "../../storage/conversations";
import type { Tx } from "../../storage/db";
import { listMachineEvents } from "../../storage/machine-events";
import { conversationSnapshots } from "../../storage/operator-snapshots";
import type { AuthEnv } from "../auth";
import { ReplayQuery } from "../contract";
import type { Deps } from "../deps";
import { describeZod } from "../errors";

/**
 * GET /v1/conversations/{id}/replay — DESIGN principle 2 checked on stored data: each of the
 * conversation's machine snapshots is rebuilt from its event log (machine_events) through the
 * pure machine that took the events (the clinic dialogue regenerated from the settings versions
 * the log names) and compared with the stored snapshot. `?key=` narrows it to one snapshot and
 * adds the log and both snapshots.
 */
export function replayRoutes(deps: Deps, systems: readonly DialogueSystem[]): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;

  app.get("/v1/conversations/:conversationId/replay", async (c) => {
    const tenantId = c.get("tenantId");
    const q = ReplayQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError("invalid_request", describeZod(q.error));
    const conv = await findConversation(sql, tenantId, c.req.param("conversationId"), undefined, ANY_ACCESS);
    if (!conv) throw new AppError("not_found", "Такого диалога нет.");
    const snapshots = (await conversationSnapshots(sql, conv.id)).filter((s) => !q.data.key || s.key === q.data.key);
    if (q.data.key && snapshots.length === 0) throw new AppError("not_found", `У диалога нет снимка ${q.data.key}.`);

    // One definition per label for the whole request (the clinic's needs its settings rows).
    const definitions = new Map<string, Promise<AnyStateMachine | null>>();
    const definition = (label: string | null, storedMachineId: string) => {
      const key = label ?? storedMachineId;
      if (!definitions.has(key)) definitions.set(key, definitionOf(systems, sql, tenantId, label, storedMachineId));
      return definitions.get(key)!;
    };

    const machines = [];
    for (const s of snapshots) {
      const log = await listMachineEvents(sql, s.key, conv.id);
      const labels = [...new Set(log.map((e) => e.machine))];
      const byLabel = new Map(
        await Promise.all(labels.map(async (l) => [l, await definition(l, s.machineId)] as const)),
      );
      const result =
        log.length === 0
          ? ({ ok: false, reason: "no event log for this snapshot" } as const)
          : replayLog(log, (l) => byLabel.get(l) ?? null);
      // The spec the newest log row names (a settings-generated machine needs its settings).
      const newest = labels
        .filter((l): l is string => l !== null)
        .map(parseMachineLabel)
        .at(-1);
      const current = await replaySpec(
        systems,
        sql,
        tenantId,
        newest?.id ?? s.machineId,
        newest?.settings ?? undefined,
      );
      const matches = result.ok ? sameSnapshot(s, result.snapshot, labels, current) : null;
      machines.push({
        key: s.key,
        machineId: s.machineId,
        machineVersion: s.machineVersion,
        rowVersion: s.rowVersion,
        events: log.length,
        definitions: labels,
        replayed: result.ok,
        matches,
        ...(result.ok ? {} : { reason: result.reason }),
        ...(q.data.key
          ? {
              log: log.map((e) => ({ seq: e.seq, machine: e.machine, runId: e.runId, event: e.event })),
              stored: s.snapshot,
              ...(result.ok ? { replayedSnapshot: result.snapshot } : {}),
            }
          : {}),
      });
    }
    return c.json({ conversationId: conv.id, kind: conv.kind, machines });
  });
  return app;
}

/** The machine definition a log label names (the systems' fixed specs, or one generated from the settings it names); an unlabelled row (logged before labels) took the running one. */
export async function definitionOf(
  systems: readonly DialogueSystem[],
  sql: Tx,
  tenantId: string,
  label: string | null,
  storedMachineId: string,
): Promise<AnyStateMachine | null> {
  if (label === null) return (await replaySpec(systems, sql, tenantId, storedMachineId))?.machine ?? null;
  const l = parseMachineLabel(label);
  if (!l) return null;
  const spec = await replaySpec(systems, sql, tenantId, l.id, l.settings ?? undefined);
  if (!spec) return null;
  const replays =
    spec.version === l.version ||
    (spec.replaysFrom !== undefined && l.version >= spec.replaysFrom && l.version < spec.version);
  return replays ? spec.machine : null;
}

/**
 * The stored snapshot against the replayed one. A snapshot stored by an older clinic-dialogue
 * version is migrated first, as a turn would restore it. For a log begun before the v2 statechart,
 * the stepped branches' history is left out: v1 kept none, so the migration can only rebuild it
 * for the suspended scenario (the one a resume enters), while replaying v1's events through v2
 * also records a booking left at its final step — an entry no transition ever reads.
 */
function sameSnapshot(
  stored: { machineId: string; machineVersion: number; snapshot: unknown },
  replayed: unknown,
  labels: (string | null)[],
  spec: MachineSpec | null,
): boolean {
  let before = stored.snapshot;
  if (spec?.migrate && stored.machineVersion < spec.version) before = spec.migrate(before, stored.machineVersion);
  const older = spec
    ? labels.some((l) => (l ? (parseMachineLabel(l)?.version ?? spec.version) : spec.version) < spec.version)
    : false;
  const omit = older ? (spec?.unrecordedBefore ?? []) : [];
  const strip = (v: unknown) =>
    omit.length ? Object.fromEntries(Object.entries(v as object).filter(([k]) => !omit.includes(k))) : v;
  return JSON.stringify(canonical(strip(replayed))) === JSON.stringify(canonical(strip(before)));
}

/** JSON with object keys sorted (jsonb does not keep key order), for comparing snapshots. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}
