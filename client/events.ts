/**
 * The events of a run (CONTRACT §2, doc/streaming.md) as plain TypeScript types. The zod
 * contract per system (systems/<name>/contract.ts) is the source of truth for the payloads;
 * these types name what a client reads and stay loose where the contract is richer.
 */
export interface RunStarted {
  runId: string;
  conversationId?: string;
  threadId?: string;
  interactionId?: string;
  planVersion?: number;
}

export interface StageEvent {
  stageId: string;
  name: string;
  status: "ok" | "skipped" | "failed";
  durationMs: number;
  data?: unknown;
}

export interface Candidate {
  candidateId: string;
  displayName: string;
  documentType?: string;
  identity?: string;
  [k: string]: unknown;
}

export interface ClarificationRequired {
  id: string;
  interactionId: string;
  question: string;
  candidates: Candidate[];
  planVersion?: number;
  [k: string]: unknown;
}

export interface AnswerReplaced {
  text: string;
  reason: "validation_failed" | "model_failed" | string;
  issues: string[];
}

/** The server's own `error` event: the run failed; it is not a dropped connection. */
export interface ServerError {
  code: string;
  message: string;
}

export interface ClinicFinal {
  reply: string;
  state: {
    activeBranch: string | null;
    step?: string | null;
    handoffCount: number;
    escalationReason?: string | null;
    [k: string]: unknown;
  };
  events: string[];
  [k: string]: unknown;
}

export interface WorkbenchFinal {
  interactionId: string;
  status: string;
  answer: string;
  entityCitations: string[];
  validation: { ok: boolean; issues: { code: string; detail?: string }[] };
  [k: string]: unknown;
}

export interface EvidenceFinal {
  user_facing_answer: string;
  [k: string]: unknown;
}

type Ev<N extends string, D> = { event: N; id: number; data: D };

/** One event of a run; `id` is its SSE id (1, 2, … within the run). */
export type RunEvent<Final = unknown> =
  | Ev<"run_started", RunStarted>
  | Ev<"stage", StageEvent>
  | Ev<"router_decision", { intent: string | null }>
  | Ev<"clarification_required", ClarificationRequired>
  | Ev<"token", { delta: string }>
  | Ev<"answer_replaced", AnswerReplaced>
  | Ev<"final", Final>
  | Ev<"error", ServerError>
  | Ev<"done", Record<string, never>>;

export type ClinicEvent = RunEvent<ClinicFinal>;
export type WorkbenchEvent = RunEvent<WorkbenchFinal>;
export type EvidenceEvent = RunEvent<EvidenceFinal>;
