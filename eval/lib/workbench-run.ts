import type { WorkbenchCase, WorkbenchExpect, Workspace } from "./dataset";
import { first, named, stageOf, type SseResult } from "./http";
import { playTurns, turnResult, type CaseRun, type TurnResultOf } from "./case-run";
import type { DocView } from "./steps";

/** Runs Workbench cases over HTTP and records what each turn did, as a client and the stages show it. */

export interface WorkbenchObserved {
  outcome: "final" | "clarification" | "error" | "none";
  plan: Array<{
    intent: string;
    sourceMode: string;
    entityType?: string;
    dependsOn: string[];
    folderScope?: string;
  }> | null;
  plannedBy: string | null;
  resolution: Array<{ status: string; resolvedIdentity?: string; resolvedBy?: string }>;
  rerankerDecision: string | null;
  clarification: { slot: string; candidates: string[] } | null;
  replyKind: string | null;
  replyDecidedBy: string | null;
  interactionStatus: string | null;
  previousInteractionStatus: string | null;
  citations: string[] | null;
  validationOk: boolean | null;
  docs: string[];
  reasons: string[];
  errorCode: string | null;
}

export type WorkbenchTurnResult = TurnResultOf<"workbench", WorkbenchExpect, WorkbenchObserved, boolean>;

function applyPatch(ws: Workspace, p: WorkbenchCase["turns"][number]["workspacePatch"]): Workspace {
  if (!p) return ws;
  const out: Workspace = structuredClone(ws);
  if (p.remove) out.documents = out.documents.filter((d) => !p.remove!.includes(d.identity));
  if (p.rename) for (const d of out.documents) if (p.rename[d.identity]) d.displayName = p.rename[d.identity]!;
  if (p.add) out.documents.push(...p.add);
  if (p.generation) out.generation = p.generation;
  return out;
}

function docViews(ws: Workspace): DocView[] {
  const names = new Map(ws.documents.map((d) => [d.identity, d.displayName]));
  return ws.documents.map((d) => ({
    identity: d.identity,
    displayName: d.displayName,
    documentType: d.documentType,
    ...(d.folderIdentity && names.has(d.folderIdentity) ? { folderName: names.get(d.folderIdentity)! } : {}),
  }));
}

/**
 * Stand-in for the answer model in scripted runs when a turn scripts none: a well-behaved answer
 * that cites exactly the workspace documents it was given. Answer quality is not what those turns
 * label; a turn that does label it scripts the answer.
 */
export function citingAnswer(messages: { content: string }[]): string {
  try {
    const req = JSON.parse(messages.at(-1)?.content ?? "{}") as {
      context?: Array<{ kind: string; identity?: string; items?: Array<{ identity: string }> }>;
    };
    const ids = new Set<string>();
    for (const b of req.context ?? []) {
      if (b.kind === "entity" && b.identity) ids.add(b.identity);
      if (b.kind === "list") for (const i of (b.items ?? []).slice(0, 5)) ids.add(i.identity);
    }
    return ids.size
      ? `По подготовленному контексту: ${[...ids].map((i) => `[[${i}]]`).join(", ")}.`
      : "По документации Endge: ответ собран из переданных фрагментов.";
  } catch {
    return "Ответ по подготовленному контексту.";
  }
}

function observe(r: SseResult): WorkbenchObserved {
  const clar = first(r, "clarification_required") as
    { candidates?: Array<{ identity: string }>; slot?: string } | undefined;
  const fin = first(r, "final") as { entityCitations?: string[]; validation?: { ok: boolean } } | undefined;
  const err = first(r, "error") as { code?: string } | undefined;
  const plan = stageOf(r, "03")?.data as { plannedBy?: string; tasks?: WorkbenchObserved["plan"] } | undefined;
  const res = stageOf(r, "06")?.data as
    | { tasks?: WorkbenchObserved["resolution"]; reranker?: { called?: boolean; decision?: { kind: string } } }
    | undefined;
  const reply = (stageOf(r, "07")?.data as { reply?: { kind?: string; decidedBy?: string } } | undefined)?.reply;
  const docs =
    (stageOf(r, "05")?.data as { fragments?: Array<{ docId: string }> } | undefined)?.fragments?.map((f) =>
      String(f.docId),
    ) ?? [];
  const reasons = (stageOf(r, "09")?.data as { reasons?: string[] } | undefined)?.reasons ?? [];
  const outcome = clar ? "clarification" : fin ? "final" : err || r.status >= 400 ? "error" : "none";
  return {
    outcome,
    plan: plan?.tasks ?? null,
    plannedBy: plan?.plannedBy ?? null,
    resolution: res?.tasks ?? [],
    rerankerDecision: res?.reranker?.called ? (res.reranker.decision?.kind ?? "invalid") : null,
    clarification: clar
      ? { slot: String(clar.slot ?? ""), candidates: (clar.candidates ?? []).map((c) => c.identity) }
      : null,
    replyKind: reply?.kind ?? null,
    replyDecidedBy: reply?.decidedBy ?? null,
    interactionStatus: null,
    previousInteractionStatus: null,
    citations: fin ? (fin.entityCitations ?? []) : null,
    validationOk: fin?.validation ? fin.validation.ok : null,
    docs,
    reasons,
    errorCode: err?.code ?? r.json?.error?.code ?? null,
  };
}

export function runWorkbenchCase(
  { client, models, scriptFor }: CaseRun,
  c: WorkbenchCase,
  ws: Workspace,
): Promise<WorkbenchTurnResult[]> {
  let workspace = ws;
  type Clar = { id: string; interactionId: string; candidates: Array<{ candidateId: string; identity: string }> };
  let lastClar: Clar | null = null;
  const asked = new Map<number, Clar>();
  let interactionId: string | null = null;
  return playTurns(client, "/v1/workbench/conversations", c, async (conversationId, t, i) => {
    workspace = applyPatch(workspace, t.workspacePatch);
    const body: Record<string, unknown> = { text: t.text, workspace, debug: true };
    const answering = t.replyToTurn !== undefined ? (asked.get(t.replyToTurn) ?? null) : lastClar;
    const diverged = !!t.reply && !answering;
    if (t.reply && answering) {
      body.interactionId = answering.interactionId;
      body.replyToClarificationId = answering.id;
      if (t.select)
        body.selectedCandidateId = answering.candidates.find((x) => x.identity === t.select)?.candidateId ?? t.select;
    }
    if (t.forgeCandidateId) body.selectedCandidateId = t.forgeCandidateId;
    models.beginTurn(scriptFor(c.id, i, t.models), {
      documents: docViews(workspace),
      fallback: { answer: citingAnswer },
    });
    const r = await client.sse(`/v1/workbench/conversations/${conversationId}/messages`, body);
    const calls = models.endTurn();
    const observed = observe(r);
    const clar = first(r, "clarification_required") as Clar | undefined;
    lastClar = clar ?? null;
    if (clar) asked.set(i, clar);
    const prevInteraction = interactionId;
    const started = first(r, "run_started") as { interactionId?: string } | undefined;
    if (started?.interactionId) interactionId = started.interactionId;
    const statusOf = async (id: string | null) =>
      id
        ? ((await client.json<{ status?: string }>("GET", `/v1/workbench/interactions/${id}`)).body.status ?? null)
        : null;
    if (t.expect.interactionStatus) observed.interactionStatus = await statusOf(interactionId);
    if (t.expect.previousInteractionStatus) observed.previousInteractionStatus = await statusOf(prevInteraction);
    if (named(r, "done").length === 0 && r.events.length) observed.outcome = "none";
    return { ...turnResult("workbench", c, i, t, observed, calls, r.ms), diverged };
  });
}
