import type { ClinicTurnResult } from "./clinic-run";
import type { WorkbenchTurnResult } from "./workbench-run";

/**
 * Per-turn checks: each label of a turn becomes one named check, so a turn's failure says which
 * stage went wrong and the metrics count the same checks.
 */

export interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join("\u0000") === [...b].sort().join("\u0000");
const j = (v: unknown) => JSON.stringify(v);

export function countCalls(calls: { role: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.role] = (out[c.role] ?? 0) + 1;
  return out;
}

export function planMatches(t: WorkbenchTurnResult): { plan: boolean; routing: boolean; detail: string } {
  const want = t.expect.plan ?? [];
  const got = t.observed.plan ?? [];
  const routing = want.length === got.length && want.every((w, i) => w.sourceMode === got[i]!.sourceMode);
  const plan =
    want.length === got.length &&
    want.every((w, i) => {
      const g = got[i]!;
      return (
        w.intent === g.intent &&
        (w.entityType === undefined || w.entityType === g.entityType) &&
        (w.dependsOn === undefined || w.dependsOn === g.dependsOn.length) &&
        (w.folderScope === undefined || w.folderScope === !!g.folderScope)
      );
    });
  const show = (ts: Array<{ intent: string; sourceMode: string; entityType?: string | undefined }>) =>
    ts.map((x) => `${x.intent}/${x.sourceMode}${x.entityType ? `/${x.entityType}` : ""}`).join(", ");
  return { plan, routing, detail: `got [${show(got)}], expected [${show(want)}]` };
}

export function resolutionMatches(t: WorkbenchTurnResult): { ok: boolean; detail: string } {
  const want = t.expect.resolution ?? [];
  const got = t.observed.resolution;
  const statuses = sameSet(
    got.map((r) => r.status),
    want.map((r) => r.status),
  );
  const resolved = got.map((r) => r.resolvedIdentity).filter(Boolean) as string[];
  const ids = want.every((w) => !w.identity || resolved.includes(w.identity));
  return {
    ok: statuses && ids,
    detail: `got [${got.map((r) => `${r.status}${r.resolvedIdentity ? `:${r.resolvedIdentity}` : ""}`)}], expected [${want.map((r) => `${r.status}${r.identity ? `:${r.identity}` : ""}`)}]`,
  };
}

export function workbenchChecks(t: WorkbenchTurnResult): Check[] {
  const e = t.expect;
  const o = t.observed;
  const out: Check[] = [
    { name: "outcome", ok: o.outcome === e.outcome, detail: `${o.outcome}, expected ${e.outcome}` },
  ];
  if (e.plan) {
    const m = planMatches(t);
    out.push({ name: "plan", ok: m.plan, detail: m.detail }, { name: "routing", ok: m.routing, detail: m.detail });
  }
  if (e.plannedBy)
    out.push({ name: "plannedBy", ok: o.plannedBy === e.plannedBy, detail: `${o.plannedBy}, expected ${e.plannedBy}` });
  if (e.resolution) {
    const m = resolutionMatches(t);
    out.push({ name: "resolution", ok: m.ok, detail: m.detail });
  }
  if (e.clarification) {
    const got = o.clarification?.candidates ?? [];
    if (e.clarification.slot)
      out.push({
        name: "clarification.slot",
        ok: o.clarification?.slot === e.clarification.slot,
        detail: `${o.clarification?.slot}, expected ${e.clarification.slot}`,
      });
    if (e.clarification.candidates)
      out.push({
        name: "clarification.candidates",
        ok: sameSet(got, e.clarification.candidates),
        detail: `got [${got}], expected [${e.clarification.candidates}]`,
      });
    if (e.clarification.candidatesInclude)
      out.push({
        name: "clarification.candidates",
        ok: e.clarification.candidatesInclude.every((x) => got.includes(x)),
        detail: `got [${got}], must include [${e.clarification.candidatesInclude}]`,
      });
  }
  if (e.replyKind)
    out.push({
      name: "replyKind",
      ok: o.replyKind === e.replyKind,
      detail: `${o.replyKind} (${o.replyDecidedBy}), expected ${e.replyKind}`,
    });
  if (e.interactionStatus)
    out.push({
      name: "interactionStatus",
      ok: o.interactionStatus === e.interactionStatus,
      detail: `${o.interactionStatus}, expected ${e.interactionStatus}`,
    });
  if (e.previousInteractionStatus)
    out.push({
      name: "previousInteractionStatus",
      ok: o.previousInteractionStatus === e.previousInteractionStatus,
      detail: `${o.previousInteractionStatus}, expected ${e.previousInteractionStatus}`,
    });
  if (e.citations)
    out.push({
      name: "citations",
      ok: sameSet(o.citations ?? [], e.citations),
      detail: `got [${o.citations}], expected [${e.citations}]`,
    });
  if (e.validationOk !== undefined)
    out.push({
      name: "validation",
      ok: o.validationOk === e.validationOk,
      detail: `${o.validationOk}, expected ${e.validationOk}`,
    });
  if (e.docs)
    out.push({
      name: "docs",
      ok: e.docs.every((d) => o.docs.some((g) => g.includes(d))),
      detail: `got [${o.docs}], must include [${e.docs}]`,
    });
  if (e.reasons)
    out.push({
      name: "reasons",
      ok: e.reasons.every((r) => o.reasons.includes(r)),
      detail: `got [${o.reasons}], must include [${e.reasons}]`,
    });
  if (e.errorCode)
    out.push({ name: "errorCode", ok: o.errorCode === e.errorCode, detail: `${o.errorCode}, expected ${e.errorCode}` });
  if (e.calls) {
    const n = countCalls(t.calls);
    for (const [role, want] of Object.entries(e.calls))
      out.push({ name: `calls.${role}`, ok: (n[role] ?? 0) === want, detail: `${n[role] ?? 0}, expected ${want}` });
  }
  return out;
}

export function clinicChecks(t: ClinicTurnResult): Check[] {
  const e = t.expect;
  const s = t.observed.state;
  const out: Check[] = [];
  const field = (name: string, got: unknown, want: unknown) =>
    out.push({ name, ok: j(got) === j(want), detail: `${j(got)}, expected ${j(want)}` });
  if (!s)
    out.push({
      name: "final",
      ok: false,
      detail: `no final event${t.observed.error ? ` (error ${t.observed.error})` : ""}`,
    });
  if (Array.isArray(e.routerDecision))
    out.push({
      name: "router",
      ok: e.routerDecision.includes(s?.routerDecision as never),
      detail: `${j(s?.routerDecision)}, expected one of ${j(e.routerDecision)}`,
    });
  else if (e.routerDecision !== undefined) field("router", s?.routerDecision, e.routerDecision);
  if (e.activeBranch !== undefined) field("branch", s?.activeBranch, e.activeBranch);
  if (e.step !== undefined) field("step", s?.step, e.step);
  if (e.slots) {
    // A labelled null means "cleared": absent or null.
    const bad = Object.entries(e.slots).filter(([k, v]) => j(s?.slots?.[k] ?? null) !== j(v));
    out.push({
      name: "slots",
      ok: bad.length === 0,
      detail: bad.map(([k, v]) => `${k}=${j(s?.slots?.[k])}, expected ${j(v)}`).join("; "),
    });
  }
  if (e.events)
    out.push({
      name: "events",
      ok: sameSet(t.observed.events, e.events),
      detail: `got [${t.observed.events}], expected [${e.events}]`,
    });
  if (e.handoffCount !== undefined) field("handoffCount", s?.handoffCount, e.handoffCount);
  if (e.softInsertionCount !== undefined) field("softInsertionCount", s?.softInsertionCount, e.softInsertionCount);
  if (e.suspended !== undefined)
    field("suspended", s?.suspended ? { intent: s.suspended.intent, step: s.suspended.step } : null, e.suspended);
  if (e.escalationReason !== undefined) field("escalationReason", s?.escalationReason, e.escalationReason);
  for (const x of e.replyIncludes ?? [])
    out.push({ name: "reply", ok: t.observed.reply.includes(x), detail: `reply lacks "${x}"` });
  for (const x of e.replyExcludes ?? [])
    out.push({ name: "reply", ok: !t.observed.reply.includes(x), detail: `reply contains "${x}"` });
  if (e.stateUnchanged !== undefined) {
    out.push({
      name: "stateUnchanged",
      ok: t.observed.stateUnchanged === e.stateUnchanged,
      detail: `${t.observed.stateUnchanged}, expected ${e.stateUnchanged}`,
    });
    if (e.stateUnchanged)
      out.push({
        name: "noMessages",
        ok: t.observed.messagesDelta === 0,
        detail: `messages grew by ${t.observed.messagesDelta}`,
      });
  }
  if (e.calls) {
    const n = countCalls(t.calls);
    for (const [role, want] of Object.entries(e.calls))
      out.push({ name: `calls.${role}`, ok: (n[role] ?? 0) === want, detail: `${n[role] ?? 0}, expected ${want}` });
  }
  return out;
}
