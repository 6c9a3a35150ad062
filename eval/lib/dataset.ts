import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { ScriptSchema } from "./steps";
import { BranchCode } from "../../systems/clinic/types";

/**
 * The labelled datasets (eval/README.md describes the format). Every file is validated on load,
 * and every identity a Workbench expectation names must exist in the case's workspace, so a typo
 * in a label fails loudly instead of lowering a score.
 */

export const DATASETS_DIR = resolve(import.meta.dirname, "../datasets");

const Intent = z.enum(["explain_documentation", "find_entity", "inspect_entity", "list_entities", "unsupported"]);
const SourceMode = z.enum(["documentation", "domain", "mixed", "conversation", "none"]);
const Status = z.enum(["resolved", "ambiguous", "not_found", "unsupported_type"]);
const ReplyKind = z.enum(["answer", "correction", "new_request", "cancel", "unclear"]);
export const SEED_ROWS = [
  "exact",
  "documentation",
  "compound",
  "ambiguous",
  "compound_ambiguous",
  "clarification",
] as const;

const Document = z.object({
  documentType: z.string(),
  identity: z.string(),
  displayName: z.string(),
  folderIdentity: z.string().nullable(),
  content: z.record(z.string(), z.unknown()).default({}),
});
export const WorkspaceSchema = z.object({ generation: z.string(), documents: z.array(Document) });
export type Workspace = z.infer<typeof WorkspaceSchema>;

const Calls = z
  .object({ planner: z.number(), reranker: z.number(), classifier: z.number(), answer: z.number() })
  .partial()
  .strict();

export const WorkbenchExpect = z
  .object({
    outcome: z.enum(["final", "clarification", "error"]),
    plan: z
      .array(
        z
          .object({
            intent: Intent,
            sourceMode: SourceMode,
            entityType: z.string().optional(),
            dependsOn: z.number().int().optional(),
            folderScope: z.boolean().optional(),
          })
          .strict(),
      )
      .optional(),
    plannedBy: z.enum(["deterministic", "llm"]).optional(),
    resolution: z.array(z.object({ status: Status, identity: z.string().optional() }).strict()).optional(),
    clarification: z
      .object({
        slot: z.string().optional(),
        candidates: z.array(z.string()).optional(),
        candidatesInclude: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
    replyKind: ReplyKind.optional(),
    interactionStatus: z.string().optional(),
    previousInteractionStatus: z.string().optional(),
    citations: z.array(z.string()).optional(),
    validationOk: z.boolean().optional(),
    docs: z.array(z.string()).optional(),
    reasons: z.array(z.string()).optional(),
    errorCode: z.string().optional(),
    calls: Calls.optional(),
    seedRow: z.enum(SEED_ROWS).optional(),
  })
  .strict();
export type WorkbenchExpect = z.infer<typeof WorkbenchExpect>;

const Patch = z
  .object({
    remove: z.array(z.string()).optional(),
    add: z.array(Document).optional(),
    rename: z.record(z.string(), z.string()).optional(),
    generation: z.string().optional(),
  })
  .strict();

export const WorkbenchCase = z
  .object({
    id: z.string(),
    workspace: z.string(),
    tags: z.array(z.string()).min(1),
    note: z.string().optional(),
    turns: z
      .array(
        z
          .object({
            text: z.string(),
            /** Answer the clarification the previous turn asked (interactionId + replyToClarificationId). */
            reply: z.boolean().optional(),
            /** With `reply`: answer the clarification asked at this (earlier) turn index instead. */
            replyToTurn: z.number().int().min(0).optional(),
            /** Click: the candidate of the previous clarification whose identity this is. */
            select: z.string().optional(),
            /** A candidate id the previous clarification never offered (must be refused). */
            forgeCandidateId: z.string().optional(),
            workspacePatch: Patch.optional(),
            models: ScriptSchema.optional(),
            expect: WorkbenchExpect,
          })
          .strict(),
      )
      .min(1),
  })
  .strict();
export type WorkbenchCase = z.infer<typeof WorkbenchCase>;

/** A clinic or Evidence case: an id, its tags, a note, and one or more turns of this shape. */
const caseOf = <T extends z.ZodRawShape>(turn: T) =>
  z
    .object({
      id: z.string(),
      tags: z.array(z.string()).min(1),
      note: z.string().optional(),
      turns: z.array(z.object(turn).strict()).min(1),
    })
    .strict();

/** A label names a branch the clinic has (its one list of codes). */
const Branch = BranchCode;

export const ClinicExpect = z
  .object({
    /** The router's decision; a list when more than one intent is a correct routing of the message. */
    routerDecision: z
      .union([Branch, z.array(Branch).min(1)])
      .nullable()
      .optional(),
    activeBranch: Branch.nullable().optional(),
    step: z.string().nullable().optional(),
    /** Slots that must have these values (others may exist). */
    slots: z.record(z.string(), z.unknown()).optional(),
    /** The exact set of `final.events`. */
    events: z.array(z.string()).optional(),
    handoffCount: z.number().int().optional(),
    softInsertionCount: z.number().int().optional(),
    suspended: z.object({ intent: Branch, step: z.string().nullable() }).nullable().optional(),
    escalationReason: z.string().nullable().optional(),
    replyIncludes: z.array(z.string()).optional(),
    replyExcludes: z.array(z.string()).optional(),
    /** A failed turn: no message stored, the thread state as before. */
    stateUnchanged: z.boolean().optional(),
    calls: z.object({ router: z.number(), branch: z.number() }).partial().strict().optional(),
  })
  .strict();
export type ClinicExpect = z.infer<typeof ClinicExpect>;

/** An operator's action on the thread through the inbox routes; `status` is the HTTP status expected. */
export const OperatorStep = z
  .object({
    action: z.enum(["take", "message", "release", "close", "assign", "transfer"]),
    operator: z.string().optional(),
    text: z.string().optional(),
    /** `assign`: who will answer (issue 43). */
    assignee: z.string().optional(),
    /** `transfer`: the colleague who holds it from now (issue 43). */
    to: z.string().optional(),
    status: z.number().int().optional(),
  })
  .strict();
export type OperatorStep = z.infer<typeof OperatorStep>;

export const ClinicCase = caseOf({
  /** What operators do before the patient's message (issue 32): inbox actions, in order. */
  operator: z.array(OperatorStep).optional(),
  text: z.string(),
  models: ScriptSchema.optional(),
  expect: ClinicExpect,
});
export type ClinicCase = z.infer<typeof ClinicCase>;

export const EvidenceCase = caseOf({
  text: z.string(),
  models: ScriptSchema.optional(),
  expect: z
    .object({
      outcome: z.string(),
      reasonCodes: z.array(z.string()).optional(),
      reasonCodesExclude: z.array(z.string()).optional(),
      answerIncludes: z.array(z.string()).optional(),
      /** What a lying answer model wrote: it must not reach the shown answer. */
      answerExcludes: z.array(z.string()).optional(),
    })
    .strict(),
});
export type EvidenceCase = z.infer<typeof EvidenceCase>;

function readJsonFiles(dir: string): { file: string; data: unknown }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ file: join(dir, f), data: JSON.parse(readFileSync(join(dir, f), "utf8")) as unknown }));
}

function parseAll<S extends z.ZodType>(dir: string, schema: S): z.infer<S>[] {
  const out: z.infer<S>[] = [];
  const ids = new Set<string>();
  for (const { file, data } of readJsonFiles(dir)) {
    const parsed = z.array(schema).safeParse(data);
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      throw new Error(`${file}: ${i.path.join(".")}: ${i.message}`);
    }
    for (const c of parsed.data as Array<{ id: string }>) {
      if (ids.has(c.id)) throw new Error(`${file}: duplicate case id ${c.id}`);
      ids.add(c.id);
      out.push(c as z.infer<S>);
    }
  }
  return out;
}

export interface Datasets {
  workspaces: Map<string, Workspace>;
  workbench: WorkbenchCase[];
  clinic: ClinicCase[];
  evidence: EvidenceCase[];
  clinicKb: { id: string; title: string; text: string; branch?: string }[];
}

export function loadDatasets(dir = DATASETS_DIR): Datasets {
  const workspaces = new Map<string, Workspace>();
  for (const { file, data } of readJsonFiles(join(dir, "workspaces"))) {
    const name = file
      .split("/")
      .pop()!
      .replace(/\.json$/, "");
    workspaces.set(name, WorkspaceSchema.parse(data));
  }
  const workbench = parseAll(join(dir, "workbench"), WorkbenchCase);
  for (const c of workbench) checkIdentities(c, workspaces);
  const kbFile = join(dir, "clinic-kb.json");
  return {
    workspaces,
    workbench,
    clinic: parseAll(join(dir, "clinic"), ClinicCase),
    evidence: parseAll(join(dir, "evidence"), EvidenceCase),
    clinicKb: existsSync(kbFile) ? (JSON.parse(readFileSync(kbFile, "utf8")) as Datasets["clinicKb"]) : [],
  };
}

function checkIdentities(c: WorkbenchCase, workspaces: Map<string, Workspace>): void {
  const ws = workspaces.get(c.workspace);
  if (!ws) throw new Error(`case ${c.id}: unknown workspace ${c.workspace}`);
  const known = new Set(ws.documents.map((d) => d.identity));
  for (const t of c.turns) for (const d of t.workspacePatch?.add ?? []) known.add(d.identity);
  const named = (t: WorkbenchCase["turns"][number]) => [
    ...(t.select ? [t.select] : []),
    ...(t.expect.resolution ?? []).flatMap((r) => (r.identity ? [r.identity] : [])),
    ...(t.expect.clarification?.candidates ?? []),
    ...(t.expect.clarification?.candidatesInclude ?? []),
    ...(t.expect.citations ?? []),
    ...Object.values(t.models ?? {}).flatMap((steps) =>
      (steps ?? []).flatMap((s) => (typeof s === "object" && s.choose ? [s.choose] : [])),
    ),
  ];
  for (const t of c.turns)
    for (const id of named(t))
      if (!known.has(id)) throw new Error(`case ${c.id}: identity ${id} is not in workspace ${c.workspace}`);
}
