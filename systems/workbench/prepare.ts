// Preparation (stages 02–11): the deterministic pipeline with its two gated model calls. Model
// calls go through ports the driver supplies; every model output is validated here before use.
// Returns what the Interaction does next: answer (with a ModelRequest), clarify, or a plain answer.
import { manifestOf, type PromptManifestEntry } from "../../llm/define-prompt";
import { PLANNER_PROMPT, RERANKER_PROMPT } from "./prompts";
import { adequacyGate, type AdequacyResult, type ClarificationDraft } from "./adequacy";
import { retrieveDocs, type DocsIndex, type RetrieveResult } from "./docs";
import {
  answerMessages,
  buildModelRequest,
  conversationWindow,
  type ConversationMessage,
  type ModelRequest,
} from "./model-request";
import { normalize, type Normalized } from "./normalize";
import { deterministicPlan, type ParsedPlan } from "./plan";
import { resolveMention, SCORES } from "./resolve";
import { validatePlan } from "./plan-validate";
import { acceptPlannerOutput, plannerGate } from "./planner-gate";
import { applyRerank, rerankGate, validateRerankerOutput, type RerankDecision } from "./rerank";
import type { ResolverIndex } from "./resolve-index";
import { resolveTasks, type Referent, type ResolveTasksResult } from "./resolve-tasks";
import { documentationQuery, routeSources, type Routing } from "./route";
import { fold } from "./text";
import type { StageTrace } from "./trace";
import type { Plan, WorkspaceSnapshot } from "./types";
import { readsDocumentation } from "./intents";

export interface PromptMessage {
  role: "system" | "user";
  content: string;
}

/** A port returns the model's parsed JSON, or null when the call failed (never throws). */
export type ModelPort = (messages: PromptMessage[]) => Promise<unknown | null>;

export interface PrepareInput {
  text: string;
  planVersion: number;
  /** A plan that already exists (patched by an answer): planning is skipped, it is re-validated. */
  plan?: Plan;
  workspace: WorkspaceSnapshot;
  snapshotSha256: string;
  /** The resolver's index of that snapshot (resolve-index.ts getIndex), looked up once by the caller. */
  index: ResolverIndex;
  /** Whether the index came from the cache rather than being built for this turn (stage 06 says so). */
  indexCached: boolean;
  docs: DocsIndex | null;
  referents: readonly Referent[];
  history: readonly ConversationMessage[];
  clarifications?: Array<{ question: string; answer: string }>;
  /** Preparatory calls still allowed in this run (seed table: at most 2, the classifier included). */
  preparatoryBudget: number;
  /** Stage 07 payload, decided by the caller (continuation state of the Interaction). */
  interaction: unknown;
  ports: { planner?: ModelPort; reranker?: ModelPort };
  trace: StageTrace;
  contextBudgetTokens?: number;
}

export interface PrepareResult {
  outcome: "answer" | "clarify" | "plain";
  normalized: Normalized;
  plan: Plan;
  routing: Routing;
  resolution: ResolveTasksResult | null;
  docs: RetrieveResult | null;
  adequacy: AdequacyResult;
  index: ResolverIndex;
  modelRequest?: ModelRequest;
  messages?: PromptMessage[];
  manifest: PromptManifestEntry[];
  clarification?: ClarificationDraft;
  plainAnswer?: string;
  /** Said before the model's answer: the unsupported part of a compound request. */
  notice?: string;
  preparatoryCalls: { planner: number; reranker: number };
  /** Documents this turn was about — the referents of a later "она". */
  targets: Array<{ identity: string; documentType: string; displayName: string }>;
}

export async function prepare(input: PrepareInput): Promise<PrepareResult> {
  const { trace } = input;
  const calls = { planner: 0, reranker: 0 };
  let budget = input.preparatoryBudget;
  const manifest: PromptManifestEntry[] = [];
  /** One preparatory model call: it spends the budget, is counted, names its prompt, sends the request as JSON. */
  const ask = (role: "planner" | "reranker", prompt: typeof PLANNER_PROMPT, port: ModelPort, request: object) => {
    budget--;
    calls[role]++;
    manifest.push(manifestOf(prompt));
    return port([
      { role: "system", content: prompt.text },
      { role: "user", content: JSON.stringify(request) },
    ]);
  };

  const normalized = trace.time(
    "02",
    () => normalize(input.text),
    (n) => ({
      canonical: n.canonical,
      folded: n.folded,
      quoted: n.quoted,
      uuids: n.uuids,
      identities: n.identities,
      commands: n.commands,
      historyRefs: n.historyRefs,
    }),
  );

  const { index } = input;
  const knownTypes = index.types;

  // ---- 03 plan ----
  const t3 = performance.now();
  let plan: Plan;
  let planInfo: Record<string, unknown>;
  if (input.plan) {
    plan = input.plan;
    const issues = validatePlan(plan, knownTypes);
    planInfo = { source: "patched", issues };
  } else {
    const parsed = lookUpBareName(deterministicPlan(normalized, input.planVersion), index);
    plan = parsed.plan;
    const gate = plannerGate(parsed);
    planInfo = { confidence: parsed.confidence, gate, planner: { called: false } };
    if (gate.call && input.ports.planner && budget > 0) {
      const raw = await ask("planner", PLANNER_PROMPT, input.ports.planner, {
        request: normalized.canonical,
        deterministicPlan: parsed.plan.tasks,
        documentTypes: [...knownTypes],
      });
      const accepted =
        raw === null
          ? ({ ok: false, issues: [{ code: "no_answer" }] } as const)
          : acceptPlannerOutput(raw, {
              norm: normalized,
              planVersion: input.planVersion,
              knownTypes,
              isIdentity: (s) => index.byIdentity.has(fold(s)),
            });
      if (accepted.ok) plan = accepted.plan;
      planInfo.planner = {
        called: true,
        accepted: accepted.ok,
        ...(accepted.ok ? {} : { issues: accepted.issues, fallback: "deterministic" }),
      };
      if (accepted.ok && accepted.searchQueries.length) planInfo.searchQueries = accepted.searchQueries;
    }
  }
  trace.record(
    "03",
    "ok",
    { planVersion: plan.planVersion, plannedBy: plan.plannedBy, tasks: plan.tasks, ...planInfo },
    performance.now() - t3,
  );

  const routing = trace.time("04", () => routeSources(plan));

  // ---- 05 documentation ----
  let docs: RetrieveResult | null = null;
  if (routing.loadDocumentation && input.docs) {
    const q = documentationQuery(normalized.canonical, plan);
    const extra = (planInfo.searchQueries as string[] | undefined) ?? [];
    docs = trace.time(
      "05",
      () => retrieveDocs(input.docs!, q, { extraQueries: extra }),
      (r) => ({
        query: q,
        queryTerms: r.queryTerms,
        fragments: r.fragments,
        considered: r.considered,
        droppedDuplicates: r.droppedDuplicates,
        droppedByBudget: r.droppedByBudget,
        docsVersion: input.docs!.version,
      }),
    );
  } else if (routing.loadDocumentation) {
    docs = { fragments: [], considered: 0, droppedDuplicates: 0, droppedByBudget: 0, queryTerms: [] };
    trace.record("05", "failed", { reason: "no_documentation_configured", fragments: [] });
  } else trace.skip("05", "no_documentation_task");

  // ---- 06 domain resolution (+ the reranker for one ambiguous task) ----
  let resolution: ResolveTasksResult | null = null;
  if (routing.resolveDomain) {
    const t6 = performance.now();
    resolution = resolveTasks(plan, index, input.referents);
    let rerank: Record<string, unknown> = { called: false };
    for (const r of resolution.tasks) {
      const gate = rerankGate(r);
      if (!gate.call) continue;
      if (!input.ports.reranker || budget <= 0) {
        rerank = { called: false, taskId: r.taskId, reason: "budget" };
        break;
      }
      const raw = await ask("reranker", RERANKER_PROMPT, input.ports.reranker, {
        request: normalized.canonical,
        mention: r.mention,
        candidates: r.candidates.map((c) => describeCandidate(index, c)),
      });
      const decision: RerankDecision =
        raw === null ? { kind: "invalid", reason: "no_answer" } : validateRerankerOutput(raw, r);
      rerank = { called: true, taskId: r.taskId, decision };
      if (decision.kind === "choose") {
        // Pin the model's (validated) choice so dependants resolve from it and a later
        // continuation does not ask the reranker again.
        plan = {
          ...plan,
          tasks: plan.tasks.map((t) =>
            t.id === r.taskId
              ? {
                  ...t,
                  selection: {
                    identity: decision.identity,
                    candidateId: decision.candidateId,
                    clarificationId: "reranker",
                    planVersion: plan.planVersion,
                    source: "reranker" as const,
                  },
                }
              : t,
          ),
        };
        const chosen = applyRerank(r, decision);
        resolution = resolveTasks(plan, index, input.referents);
        resolution.tasks = resolution.tasks.map((x) => (x.taskId === r.taskId ? chosen : x));
      }
      break; // seed table: at most one reranker call per run
    }
    trace.record(
      "06",
      "ok",
      {
        tasks: resolution.tasks,
        blocked: resolution.blocked,
        reranker: rerank,
        index: {
          snapshotSha256: input.snapshotSha256,
          cached: input.indexCached,
          documents: index.docs.length,
          buildMs: Math.round(index.buildMs * 100) / 100,
        },
      },
      performance.now() - t6,
    );
  } else trace.skip("06", "no_domain_task");

  trace.record("07", "ok", input.interaction);
  const window = trace.time(
    "08",
    () => conversationWindow(input.history),
    (w) => ({ messages: w, referents: input.referents.slice(0, 10) }),
  );

  const adequacy = trace.time(
    "09",
    () =>
      adequacyGate({
        plan,
        resolution,
        docs: docs ? docs.fragments : null,
        index,
        ...(input.contextBudgetTokens ? { budgetTokens: input.contextBudgetTokens } : {}),
      }),
    (a) => ({
      passed: a.passed,
      reasons: a.reasons,
      warnings: a.warnings,
      evicted: a.evicted,
      tokens: a.tokens,
      blocks: a.blocks.map((b) =>
        b.kind === "entity"
          ? { kind: b.kind, identity: b.identity, pinned: b.pinned, tokens: b.tokens }
          : b.kind === "list"
            ? { kind: b.kind, taskId: b.taskId, items: b.items.length, total: b.total, tokens: b.tokens }
            : { kind: b.kind, docId: b.docId, tokens: b.tokens },
      ),
      ...(a.clarification
        ? {
            clarification: {
              taskId: a.clarification.taskId,
              slot: a.clarification.slot,
              reason: a.clarification.reason,
              candidates: a.clarification.candidates.length,
            },
          }
        : {}),
      ...(a.plainAnswer ? { plainAnswer: true } : {}),
    }),
  );

  const targets = targetsOf(resolution, index);
  const base = {
    normalized,
    plan,
    routing,
    resolution,
    docs,
    adequacy,
    index,
    manifest,
    preparatoryCalls: calls,
    targets,
  };
  if (adequacy.clarification) return { ...base, outcome: "clarify", clarification: adequacy.clarification };
  if (!adequacy.passed)
    return {
      ...base,
      outcome: "plain",
      plainAnswer: adequacy.plainAnswer ?? "Недостаточно данных для ответа. Уточните запрос, пожалуйста.",
    };

  const modelRequest = buildModelRequest({
    request: normalized.canonical,
    plan,
    resolution: resolution?.tasks ?? [],
    blocks: adequacy.blocks,
    conversation: window,
    workspace: { generation: input.workspace.generation, snapshotSha256: input.snapshotSha256 },
    ...(input.clarifications ? { clarifications: input.clarifications } : {}),
    ...(adequacy.notice ? { notices: [adequacy.notice] } : {}),
  });
  const am = answerMessages(modelRequest);
  manifest.push(...am.manifest);
  trace.record("10", "ok", { prompts: manifest });
  trace.record("11", "ok", { role: "answer", modelRequest });
  return {
    ...base,
    outcome: "answer",
    modelRequest,
    messages: am.messages,
    ...(adequacy.notice ? { notice: adequacy.notice } : {}),
  };
}

/**
 * A bare name with no command or type ("Бюджет продаж", "Что такое Бюджет продаж?") is routed to
 * the documentation by the parser; when it is a workspace document's whole name it is a question
 * about that document too (mixed), decided here with the index — no planner call needed.
 */
function lookUpBareName(parsed: ParsedPlan, index: ResolverIndex): ParsedPlan {
  const [task, ...rest] = parsed.plan.tasks;
  if (!task || rest.length || !readsDocumentation(task.intent) || parsed.bareNames.length !== 1) return parsed;
  const name = parsed.bareNames[0]!;
  const r = resolveMention(index, { mention: name });
  const whole =
    r.candidates[0] &&
    r.candidates[0].score >= SCORES.tokens_equal &&
    (r.status === "resolved" || r.status === "ambiguous");
  if (!whole) return parsed;
  return {
    ...parsed,
    plan: { ...parsed.plan, tasks: [{ ...task, intent: "inspect_entity", sourceMode: "mixed", mentions: [name] }] },
    implicitIntent: false,
    confidence: Math.max(parsed.confidence, 0.9),
  };
}

function describeCandidate(
  index: ResolverIndex,
  c: { candidateId: string; identity: string; displayName: string; documentType: string },
) {
  const i = index.byIdentity.get(fold(c.identity));
  const doc = i !== undefined ? index.docs[i]!.doc : undefined;
  const folderI = doc?.folderIdentity ? index.byIdentity.get(fold(doc.folderIdentity)) : undefined;
  const description =
    typeof doc?.content?.description === "string" ? (doc.content.description as string).slice(0, 300) : undefined;
  return {
    candidateId: c.candidateId,
    displayName: c.displayName,
    documentType: c.documentType,
    ...(folderI !== undefined ? { folder: index.docs[folderI]!.doc.displayName } : {}),
    ...(description ? { description } : {}),
  };
}

function targetsOf(resolution: ResolveTasksResult | null, index: ResolverIndex) {
  const out: PrepareResult["targets"] = [];
  for (const r of resolution?.tasks ?? []) {
    if (r.status !== "resolved" || !r.resolvedIdentity) continue;
    const i = index.byIdentity.get(fold(r.resolvedIdentity));
    if (i === undefined) continue;
    const d = index.docs[i]!.doc;
    if (!out.some((x) => x.identity === d.identity))
      out.push({ identity: d.identity, documentType: d.documentType, displayName: d.displayName });
  }
  return out;
}
