import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type {
  AnyRunEvent,
  ClinicEvent,
  ClinicFinal,
  DataOf,
  EvidenceEvent,
  EvidenceFinal,
  ServerError,
  WorkbenchEvent,
  WorkbenchFinal,
  WorkbenchMessage,
} from "../../client";
import type { ErrorEvent } from "../../http/contract";
import type { ClinicFinal as ClinicFinalSchema } from "../../systems/clinic/contract";
import type { EvidenceFinal as EvidenceFinalSchema } from "../../systems/evidence/contract";
import type { WorkbenchFinal as WorkbenchFinalSchema, WorkbenchMessageBody } from "../../systems/workbench/contract";

/**
 * Issue 15 item 4: the client's event and body types are the zod contracts' (`z.infer`), not a
 * second statement of them. Checked two ways: type assertions (compiled by `npm run typecheck`),
 * and a compile of the client code with a contract edited in memory — the edit must be a type
 * error in the code that reads the event. Hand-written types would compile on unchanged.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

// ---- compile-time: the types are the contracts' ----
expectTypeOf<ClinicFinal>().toEqualTypeOf<z.output<typeof ClinicFinalSchema>>();
expectTypeOf<WorkbenchFinal>().toEqualTypeOf<z.output<typeof WorkbenchFinalSchema>>();
expectTypeOf<EvidenceFinal>().toEqualTypeOf<z.output<typeof EvidenceFinalSchema>>();
expectTypeOf<ServerError>().toEqualTypeOf<z.output<typeof ErrorEvent>>();
expectTypeOf<WorkbenchMessage>().toEqualTypeOf<z.input<typeof WorkbenchMessageBody>>();
// Each system's stream has its own events and no other system's.
expectTypeOf<ClinicEvent["event"]>().toEqualTypeOf<
  "run_started" | "stage" | "token" | "error" | "done" | "router_decision" | "final"
>();
expectTypeOf<DataOf<ClinicEvent, "clarification_required">>().toBeNever();
expectTypeOf<DataOf<WorkbenchEvent, "router_decision">>().toBeNever();
expectTypeOf<DataOf<EvidenceEvent, "answer_replaced">>().toHaveProperty("text");
expectTypeOf<DataOf<AnyRunEvent, "final">>().toEqualTypeOf<ClinicFinal | WorkbenchFinal | EvidenceFinal>();
// @ts-expect-error the evidence final's text is `answer` (a hand-written type once said user_facing_answer)
export const wrongField = (f: EvidenceFinal) => f.user_facing_answer;

// ---- a contract edited in memory, the client code compiled against it ----

function compilerOptions(): ts.CompilerOptions {
  const file = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(file.config, ts.sys, ROOT).options, noEmit: true };
}

/** Parsed sources shared by the compiles (the libraries' .d.ts are most of the work). */
const parsed = new Map<string, ts.SourceFile>();

/** tsc's messages for `files`, with `edits` (path → [from, to]) applied to the sources first. */
function compile(files: string[], edits: Record<string, [string, string][]> = {}): string[] {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const edited = new Map<string, string>();
  for (const [rel, pairs] of Object.entries(edits)) {
    let text = readFileSync(join(ROOT, rel), "utf8");
    for (const [from, to] of pairs) {
      expect(text, `${rel} still has ${from}`).toContain(from);
      text = text.replace(from, to);
    }
    edited.set(join(ROOT, rel), text);
  }
  const readFile = host.readFile.bind(host);
  host.readFile = (f) => edited.get(resolve(f)) ?? readFile(f);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, onError, create) => {
    const text = edited.get(resolve(f));
    if (text !== undefined) return ts.createSourceFile(f, text, lang);
    if (!parsed.has(f)) {
      const sf = getSourceFile(f, lang, onError, create);
      if (!sf) return sf;
      parsed.set(f, sf);
    }
    return parsed.get(f);
  };
  const program = ts.createProgram(
    files.map((f) => join(ROOT, f)),
    options,
    host,
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file
      ? `${d.file.fileName.slice(ROOT.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start!).line + 1}`
      : "";
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
  });
}

/** The client and the code that reads its events: the terminal chat. */
const CLIENT_CODE = ["client/index.ts", "scripts/chat.ts"];

describe("the client's event types come from the contracts", () => {
  it("the client and the chat compile clean against the contracts as they are", () => {
    expect(compile(CLIENT_CODE)).toEqual([]);
  }, 120_000);

  it("an event or body schema changed in a contract is a type error where the client reads or sends it", () => {
    const errors = compile(CLIENT_CODE, {
      // A field of the clinic's final renamed, and router_decision's payload changed.
      "contract/clinic/contract.ts": [
        ["  reply: z.string(),", "  answer: z.string(),"],
        [
          "RouterDecision = z.object({ intent: BranchCode.nullable() })",
          "RouterDecision = z.object({ branch: BranchCode })",
        ],
      ],
      // The Workbench clarification's candidates renamed, and a field of its message body.
      "contract/workbench/contract.ts": [
        [
          "  replyToClarificationId: z.string().min(1).max(200).optional(),",
          "  clarificationId: z.string().min(1).max(200).optional(),",
        ],
        [
          '  candidates: z.array(CandidateSchema).describe("the closed candidate snapshot; may be empty"),',
          "  options: z.array(CandidateSchema),",
        ],
      ],
      // The shared `error` event's code renamed: the client's own RunFailedError reads it.
      "contract/http.ts": [
        [
          'export const ErrorEvent = z.object({ code: z.string().describe("a code of CONTRACT §6"), message: z.string() });',
          "export const ErrorEvent = z.object({ kind: z.string(), message: z.string() });",
        ],
      ],
    });
    const at = (file: string, property: string) =>
      errors.filter((e) => e.startsWith(file) && e.includes(`'${property}'`));
    expect(at("scripts/chat.ts", "reply"), errors.join("\n")).not.toEqual([]);
    expect(at("scripts/chat.ts", "intent"), errors.join("\n")).not.toEqual([]);
    expect(at("scripts/chat.ts", "candidates"), errors.join("\n")).not.toEqual([]);
    expect(at("client/turn.ts", "code"), errors.join("\n")).not.toEqual([]);
    // The client builds a clarification answer's body (`satisfies WorkbenchMessage`).
    expect(at("client/index.ts", "replyToClarificationId"), errors.join("\n")).not.toEqual([]);
  }, 120_000);
});

describe("the client bundle stays small", () => {
  it("imports nothing from outside client/ but types (and no zod at run time)", () => {
    const program = ts.createProgram([join(ROOT, "client/index.ts")], compilerOptions());
    const runtime: string[] = [];
    for (const sf of program.getSourceFiles()) {
      const rel = sf.fileName.slice(ROOT.length + 1);
      if (!rel.startsWith("client/")) continue;
      for (const st of sf.statements) {
        if (!ts.isImportDeclaration(st) && !ts.isExportDeclaration(st)) continue;
        const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : null;
        if (!spec || spec.startsWith("./")) continue;
        const typeOnly = ts.isImportDeclaration(st)
          ? !!st.importClause?.isTypeOnly ||
            (!!st.importClause?.namedBindings &&
              ts.isNamedImports(st.importClause.namedBindings) &&
              !st.importClause.name &&
              st.importClause.namedBindings.elements.every((e) => e.isTypeOnly))
          : st.isTypeOnly;
        // The SSE parser is the client's one dependency.
        if (!typeOnly && spec !== "eventsource-parser") runtime.push(`${rel}: ${spec}`);
      }
    }
    expect(runtime).toEqual([]);
  }, 120_000);
});
