// Schemas shared by the Workbench stages (CONTRACT §3). Types are inferred from the schemas so the
// wire shape and the code cannot drift apart.
import { z } from "zod";

export const DOCUMENT_TYPES = ["Folder", "Composition", "Entity", "Form", "Report"] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export const INTENTS = [
  "explain_documentation",
  "find_entity",
  "inspect_entity",
  "list_entities",
  "unsupported",
] as const;
export type Intent = (typeof INTENTS)[number];

export const SOURCE_MODES = ["documentation", "domain", "mixed", "conversation", "none"] as const;
export type SourceMode = (typeof SOURCE_MODES)[number];

export const WorkspaceDocumentSchema = z.object({
  documentType: z.string().min(1).max(64),
  identity: z.string().min(1).max(256),
  displayName: z.string().max(512),
  folderIdentity: z.string().max(256).nullable().optional().default(null),
  content: z.record(z.string(), z.unknown()).optional().default({}),
});
export type WorkspaceDocument = z.infer<typeof WorkspaceDocumentSchema>;

export const WorkspaceSnapshotSchema = z.object({
  generation: z.union([z.string(), z.number()]).transform(String),
  documents: z.array(WorkspaceDocumentSchema).max(200_000),
});
export type WorkspaceSnapshot = z.infer<typeof WorkspaceSnapshotSchema>;

/** A user's choice pinned to a task by an answered clarification (scoped patch). */
export const SelectionSchema = z.object({
  identity: z.string(),
  candidateId: z.string(),
  clarificationId: z.string(),
  planVersion: z.number().int(),
  /** Who chose: the user (a clarification answer) or the reranker (re-resolved if the workspace changes). */
  source: z.enum(["user", "reranker"]).default("user"),
});
export type Selection = z.infer<typeof SelectionSchema>;

export const TaskSchema = z.object({
  id: z.string().regex(/^task-\d{1,3}$/),
  intent: z.enum(INTENTS),
  sourceMode: z.enum(SOURCE_MODES),
  entityType: z.string().optional(),
  mentions: z.array(z.string()),
  dependsOn: z.array(z.string()),
  folderScope: z.string().optional(),
  /** The mention is a back-reference to the target of this task (", затем покажи её"). */
  refersTo: z.string().optional(),
  selection: SelectionSchema.optional(),
});
export type Task = z.infer<typeof TaskSchema>;

export const PlanSchema = z.object({
  planVersion: z.number().int().min(1),
  plannedBy: z.enum(["deterministic", "llm"]),
  tasks: z.array(TaskSchema),
  /** Targets named beyond the plan's task cap: not worked on, and the answer says so. */
  omittedMentions: z.array(z.string()).optional(),
});
export type Plan = z.infer<typeof PlanSchema>;

export const CandidateSchema = z.object({
  candidateId: z.string(),
  identity: z.string(),
  displayName: z.string(),
  documentType: z.string(),
  folderIdentity: z.string().nullable().optional(),
  folderName: z.string().optional(),
});
export type Candidate = z.infer<typeof CandidateSchema>;

export type ResolutionStatus = "resolved" | "ambiguous" | "not_found" | "unsupported_type";

export interface ScoredCandidate {
  candidateId: string;
  identity: string;
  displayName: string;
  documentType: string;
  score: number;
  signals: string[];
}

/** Stage 06 entry for one task. */
export interface TaskResolution {
  taskId: string;
  mention: string;
  status: ResolutionStatus;
  resolvedIdentity?: string;
  /** How the target was fixed: by the algorithm's strongest signal, the reranker, the user, or history. */
  resolvedBy?: "exact" | "signal" | "reranker" | "clarification" | "conversation" | "dependency";
  candidates: ScoredCandidate[];
  /** list_entities: the documents in scope (identities), capped. */
  items?: string[];
  itemsTotal?: number;
  /** Set when a previously chosen document vanished from the workspace. */
  lostSelection?: string;
}
