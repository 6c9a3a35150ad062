// Stage 11: the ModelRequest the answer model receives — a derived projection of the root request,
// the current plan version, the adequate context and a bounded conversation window; never the raw
// ExportLive, never a credential.
import { ANSWER_PROMPT } from "./prompts";
import { manifestOf, type PromptManifestEntry } from "../../llm/define-prompt";
import type { ContextBlock } from "./adequacy";
import { estimateTokens } from "./text";
import type { Plan, TaskResolution } from "./types";

/** A context block as the model sees it (distributive Omit keeps the union discriminated). */
export type ContextItem = ContextBlock extends infer B
  ? B extends ContextBlock
    ? Omit<B, "tokens" | "pinned">
    : never
  : never;

export interface ConversationMessage {
  role: "user" | "assistant";
  text: string;
}

export interface ModelRequest {
  request: string;
  plan: {
    planVersion: number;
    tasks: Array<{
      id: string;
      intent: string;
      sourceMode: string;
      entityType?: string;
      mentions: string[];
      dependsOn: string[];
      target?: string;
      status?: string;
    }>;
  };
  context: ContextItem[];
  conversation: ConversationMessage[];
  workspace: { generation: string; snapshotSha256: string };
  clarifications?: Array<{ question: string; answer: string }>;
  /** Parts of the request this flow does not do (already said to the user before the answer). */
  notices?: string[];
}

/** Stage 08: the last messages that fit a small budget, oldest first. */
export function conversationWindow(
  history: readonly ConversationMessage[],
  maxMessages = 6,
  maxTokens = 600,
): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  let used = 0;
  for (let i = history.length - 1; i >= 0 && out.length < maxMessages; i--) {
    const m = history[i]!;
    const text = m.text.length > 800 ? `${m.text.slice(0, 800)}…` : m.text;
    const cost = estimateTokens(text);
    if (used + cost > maxTokens) break;
    used += cost;
    out.unshift({ role: m.role, text });
  }
  return out;
}

export function buildModelRequest(input: {
  request: string;
  plan: Plan;
  resolution: readonly TaskResolution[];
  blocks: readonly ContextBlock[];
  conversation: readonly ConversationMessage[];
  workspace: { generation: string; snapshotSha256: string };
  clarifications?: Array<{ question: string; answer: string }>;
  notices?: string[];
}): ModelRequest {
  const res = new Map(input.resolution.map((r) => [r.taskId, r]));
  return {
    request: input.request,
    plan: {
      planVersion: input.plan.planVersion,
      tasks: input.plan.tasks.map((t) => {
        const r = res.get(t.id);
        return {
          id: t.id,
          intent: t.intent,
          sourceMode: t.sourceMode,
          ...(t.entityType ? { entityType: t.entityType } : {}),
          mentions: t.mentions,
          dependsOn: t.dependsOn,
          ...(r?.resolvedIdentity ? { target: r.resolvedIdentity } : {}),
          ...(r ? { status: r.status } : {}),
        };
      }),
    },
    context: input.blocks.map((b): ContextItem => {
      if (b.kind === "entity") {
        const { pinned: _p, tokens: _t, ...rest } = b;
        return rest;
      }
      const { tokens: _t, ...rest } = b;
      return rest as ContextItem;
    }),
    conversation: [...input.conversation],
    workspace: input.workspace,
    ...(input.clarifications?.length ? { clarifications: input.clarifications } : {}),
    ...(input.notices?.length ? { notices: input.notices } : {}),
  };
}

/** Identities the answer model was shown — the only ones it may cite. */
export function passedIdentities(req: ModelRequest): Set<string> {
  const out = new Set<string>();
  for (const b of req.context) {
    if (b.kind === "entity") {
      out.add(b.identity);
      if (b.folder) out.add(b.folder.identity);
    }
    if (b.kind === "list") {
      for (const i of b.items) out.add(i.identity);
      if (b.folder) out.add(b.folder.identity);
    }
  }
  return out;
}

/**
 * Identities the passed context names inside a document's content (a form's `entity`, a link): the
 * model was shown them, so naming one is not a claim from outside the context — citing one as
 * `[[…]]` still is, since the document itself was not passed.
 */
export function referencedIdentities(req: ModelRequest): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.add(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  for (const b of req.context) if (b.kind === "entity") walk(b.content);
  return out;
}

export function answerMessages(req: ModelRequest): {
  messages: Array<{ role: "system" | "user"; content: string }>;
  manifest: PromptManifestEntry[];
} {
  return {
    messages: [
      { role: "system", content: ANSWER_PROMPT.text },
      { role: "user", content: JSON.stringify(req) },
    ],
    manifest: [manifestOf(ANSWER_PROMPT)],
  };
}
