import type { Hono } from "hono";
import type { AnyStateMachine } from "xstate";
import { z } from "zod";
import { AppError } from "../../driver/errors";
import { replayLog } from "../../driver/replay";
import type { MachineSpec } from "../../driver/turn";
import { clarificationSpec } from "../../machines/clarification";
import { CLINIC_DIALOGUE_VERSION, createClinicDialogueMachine } from "../../machines/clinic-dialogue";
import { evidenceSpec } from "../../machines/evidence-conversation";
import { interactionSpec } from "../../machines/interaction";
import { findConversation } from "../../storage/conversations";
import { listMachineEvents } from "../../storage/machine-events";
import { conversationSnapshots } from "../../storage/operator-snapshots";
import type { AuthEnv } from "../auth";
import { registryAt } from "../clinic/registry";
import type { Deps } from "../deps";
import { describeZod } from "../errors";

export const ReplayQuery = z.object({ key: z.string().min(1).max(300).optional() });

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

    const definitions = new Map<string, AnyStateMachine | null>();
    /** The definition a log label names: "<id>@<version>[|<clinic settings versions>]"; null label → the running one. */
    const resolve = async (label: string | null, storedMachineId: string): Promise<AnyStateMachine | null> => {
      const key = label ?? `${storedMachineId}@current`;
      if (definitions.has(key)) return definitions.get(key)!;
      let m: AnyStateMachine | null = null;
      const [idVersion, settings] = (label ?? "").split("|");
      const [id, version] = (idVersion ?? "").split("@");
      if (label === null) m = fixedSpecs.get(storedMachineId)?.machine ?? null;
      else if (id === "clinic-dialogue" && Number(version) === CLINIC_DIALOGUE_VERSION && settings) {
        const loaded = await registryAt(sql, tenantId, settings);
        m = loaded ? createClinicDialogueMachine(loaded.registry) : null;
      } else {
        const spec = fixedSpecs.get(id ?? "");
        m = spec && spec.version === Number(version) ? spec.machine : null;
      }
      definitions.set(key, m);
      return m;
    };

    const machines = [];
    for (const s of snapshots) {
      const log = await listMachineEvents(sql, s.key);
      const labels = [...new Set(log.map((e) => e.machine))];
      for (const l of labels) await resolve(l, s.machineId);
      const result = log.length === 0 ? ({ ok: false, reason: "no event log for this snapshot" } as const) : replayLog(log, (l) => definitions.get(l ?? `${s.machineId}@current`) ?? null);
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

/** JSON with object keys sorted (jsonb does not keep key order), for comparing snapshots. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}
