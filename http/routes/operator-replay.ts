import type { Hono } from "hono";
import type { AnyStateMachine } from "xstate";
import { AppError } from "../../driver/errors";
import { parseMachineLabel, replayLog } from "../../driver/replay";
import type { MachineSpec } from "../../driver/turn";
import { clarificationSpec } from "../../systems/workbench/clarification.machine";
import { evidenceSpec } from "../../systems/evidence/conversation.machine";
import { interactionSpec } from "../../systems/workbench/interaction.machine";
import { findConversation } from "../../storage/conversations";
import type { Tx } from "../../storage/db";
import { listMachineEvents } from "../../storage/machine-events";
import { conversationSnapshots } from "../../storage/operator-snapshots";
import type { AuthEnv } from "../auth";
import { ReplayQuery } from "../contract";
import { clinicSpec, registryAt } from "../../systems/clinic/registry-load";
import type { Deps } from "../deps";
import { describeZod } from "../errors";

/** The machines whose definitions do not depend on settings, by spec id. */
const fixedSpecs = new Map<string, MachineSpec>([interactionSpec, clarificationSpec, evidenceSpec].map((s) => [s.id, s as MachineSpec]));

/**
 * GET /v1/conversations/{id}/replay — DESIGN principle 2 checked on stored data: each of the
 * conversation's machine snapshots is rebuilt from its event log (machine_events) through the
 * pure machine that took the events (the clinic dialogue regenerated from the settings versions
 * the log names) and compared with the stored snapshot. `?key=` narrows it to one snapshot and
 * adds the log and both snapshots.
 */
export function registerOperatorReplayRoutes(app: Hono<AuthEnv>, deps: Deps): void {
  const sql = deps.db.sql;

  app.get("/v1/conversations/:conversationId/replay", async (c) => {
    const tenantId = c.get("tenantId");
    const q = ReplayQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError("invalid_request", describeZod(q.error));
    const conv = await findConversation(sql, tenantId, c.req.param("conversationId"));
    if (!conv) throw new AppError("not_found", "Такого диалога нет.");
    const snapshots = (await conversationSnapshots(sql, conv.id)).filter((s) => !q.data.key || s.key === q.data.key);
    if (q.data.key && snapshots.length === 0) throw new AppError("not_found", `У диалога нет снимка ${q.data.key}.`);

    // One definition per label for the whole request (the clinic's needs its settings rows).
    const definitions = new Map<string, Promise<AnyStateMachine | null>>();
    const definition = (label: string | null, storedMachineId: string) => {
      const key = label ?? storedMachineId;
      if (!definitions.has(key)) definitions.set(key, definitionOf(sql, tenantId, label, storedMachineId));
      return definitions.get(key)!;
    };

    const machines = [];
    for (const s of snapshots) {
      const log = await listMachineEvents(sql, s.key);
      const labels = [...new Set(log.map((e) => e.machine))];
      const byLabel = new Map(await Promise.all(labels.map(async (l) => [l, await definition(l, s.machineId)] as const)));
      const result = log.length === 0 ? ({ ok: false, reason: "no event log for this snapshot" } as const) : replayLog(log, (l) => byLabel.get(l) ?? null);
      const matches = result.ok ? JSON.stringify(canonical(result.snapshot)) === JSON.stringify(canonical(s.snapshot)) : null;
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
        ...(q.data.key ? { log: log.map((e) => ({ seq: e.seq, machine: e.machine, runId: e.runId, event: e.event })), stored: s.snapshot, ...(result.ok ? { replayedSnapshot: result.snapshot } : {}) } : {}),
      });
    }
    return c.json({ conversationId: conv.id, kind: conv.kind, machines });
  });
}

/** The machine definition a log label names; an unlabelled row (logged before labels) took the running one. */
async function definitionOf(sql: Tx, tenantId: string, label: string | null, storedMachineId: string): Promise<AnyStateMachine | null> {
  if (label === null) return fixedSpecs.get(storedMachineId)?.machine ?? null;
  const l = parseMachineLabel(label);
  if (!l) return null;
  if (l.id === "clinic-dialogue" && l.settings) {
    // The same generated (and cached) machine a turn on those settings runs.
    const loaded = await registryAt(sql, tenantId, l.settings);
    const spec = loaded ? clinicSpec(tenantId, loaded) : null;
    return spec && spec.version === l.version ? spec.machine : null;
  }
  const spec = fixedSpecs.get(l.id);
  return spec && spec.version === l.version ? spec.machine : null;
}

/** JSON with object keys sorted (jsonb does not keep key order), for comparing snapshots. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}
