// An integrator's view of /openapi.json (issue 16 item 2): Redocly's recommended rules lint it
// clean, and openapi-typescript generates types that a typed script of a real run over all three
// systems type-checks against (tsc in a temp dir, no network). A script that misuses the types
// must not type-check, so the generated types are not `any`/`never`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import Ajv2020 from "ajv/dist/2020";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { postSse } from "../utils/sse";

let doc: string;
const dir = mkdtempSync(join(tmpdir(), "openapi-client-"));

const server = useTestServer();
beforeAll(async () => {
  doc = await (await fetch(`${server.url}/openapi.json`)).text();
}, 60_000);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

/** Type-checks the files (strict) and returns tsc's messages. */
function typecheck(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: true,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file?.fileName.split("/").pop() ?? ""}:${line}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
  });
}

/**
 * The rule Redocly has no built-in for (issue 45): every operation described, every named schema
 * described and exemplified, every JSON request body exemplified.
 */
const documented = {
  id: "local",
  rules: {
    oas3: {
      "described-and-exemplified": () => ({
        Operation(op: { description?: string }, ctx: { report(p: { message: string }): void }) {
          if (!op.description?.trim()) ctx.report({ message: "operation without a description" });
        },
        NamedSchemas: {
          Schema(
            s: { description?: string; examples?: unknown[]; example?: unknown },
            ctx: { report(p: { message: string }): void },
          ) {
            if (!s.description?.trim()) ctx.report({ message: "schema without a description" });
            if (!s.examples?.length && s.example === undefined) ctx.report({ message: "schema without an example" });
          },
        },
        RequestBody: {
          MediaType(m: { example?: unknown; examples?: unknown }, ctx: { report(p: { message: string }): void }) {
            if (m.example === undefined && !m.examples) ctx.report({ message: "request body without an example" });
          },
        },
      }),
    },
  },
};

describe("the OpenAPI document as a client generator sees it", () => {
  it("lints clean with Redocly's recommended-strict rules and the description/example rule", async () => {
    const config = await createConfig({
      extends: ["recommended-strict"],
      plugins: [documented as never],
      rules: { "local/described-and-exemplified": "error" },
    });
    const problems = await lintFromString({ source: doc, absoluteRef: join(dir, "openapi.json"), config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
    // The rule finds what it is for: strip one operation's description, one schema's example.
    const d = JSON.parse(doc);
    delete d.paths["/v1/clinic/threads"].post.description;
    delete d.components.schemas.Error.examples;
    const found = await lintFromString({ source: JSON.stringify(d), absoluteRef: join(dir, "bad.json"), config });
    expect(found.map((p) => `${p.ruleId}: ${p.message}`).sort()).toEqual([
      "local/described-and-exemplified: operation without a description",
      "local/described-and-exemplified: schema without an example",
    ]);
  }, 60_000);

  it("every example fits its schema (ajv)", () => {
    const d = JSON.parse(doc) as Record<string, any>;
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: "openapi", components: d.components });
    const bad: string[] = [];
    for (const name of Object.keys(d.components.schemas)) {
      const v = ajv.compile({ $ref: `openapi#/components/schemas/${name}` });
      for (const ex of d.components.schemas[name].examples ?? [])
        if (!v(ex)) bad.push(`${name}: ${ajv.errorsText(v.errors)}`);
    }
    for (const [path, methods] of Object.entries<Record<string, any>>(d.paths))
      for (const [method, op] of Object.entries<any>(methods)) {
        const media = op.requestBody?.content?.["application/json"];
        if (!media) continue;
        const v = ajv.compile({ ...media.schema, $id: undefined });
        if (!v(media.example)) bad.push(`${method} ${path} request: ${ajv.errorsText(v.errors)}`);
      }
    expect(bad).toEqual([]);
  });

  it("openapi-typescript's types accept a real run over all three systems and reject misuse", async () => {
    writeFileSync(join(dir, "api.d.ts"), astToString(await openapiTS(JSON.parse(doc))));

    // A real run: each system's conversation, its message stream, its stored view.
    const post = async (path: string) =>
      (await (await fetch(`${server.url}${path}`, { method: "POST" })).json()) as Record<string, string>;
    const get = async (path: string) => (await fetch(`${server.url}${path}`)).json();
    const thread = await post("/v1/clinic/threads");
    const clinic = await postSse(`${server.url}/v1/clinic/threads/${thread.threadId}/messages`, {
      text: "Хочу записаться на чистку",
      debug: true,
    });
    const wb = await post("/v1/workbench/conversations");
    const workbench = await postSse(`${server.url}/v1/workbench/conversations/${wb.conversationId}/messages`, {
      text: "Найди сущность «Договор»",
    });
    const interactionId = (workbench.events[0]!.data as { interactionId: string }).interactionId;
    const evc = await post("/v1/evidence/conversations");
    const evidence = await postSse(`${server.url}/v1/evidence/conversations/${evc.conversationId}/messages`, {
      text: "Какая погода в Москве?",
    });
    for (const r of [clinic, workbench, evidence]) expect(r.events.at(-1)?.event).toBe("done");

    const lit = (v: unknown) => JSON.stringify(v, null, 1);
    const body = (p: string, m: string, s: number, type = "application/json") =>
      `paths["${p}"]["${m}"]["responses"][${s}]["content"]["${type}"]`;
    writeFileSync(
      join(dir, "run.ts"),
      `import type { paths } from "./api";
type Req<P extends keyof paths> = paths[P] extends { post: { requestBody?: { content: { "application/json": infer B } } } } ? B : never;
const clinicBody: Req<"/v1/clinic/threads/{threadId}/messages"> = { text: "Хочу записаться на чистку", debug: true };
const thread: ${body("/v1/clinic/threads", "post", 201)} = ${lit(thread)};
const clinicEvents: ${body("/v1/clinic/threads/{threadId}/messages", "post", 200, "text/event-stream")}[] = ${lit(clinic.events)};
const clinicThread: ${body("/v1/clinic/threads/{threadId}", "get", 200)} = ${lit(await get(`/v1/clinic/threads/${thread.threadId}`))};
const workbenchBody: Req<"/v1/workbench/conversations/{id}/messages"> = { text: "Найди сущность «Договор»" };
const wb: ${body("/v1/workbench/conversations", "post", 201)} = ${lit(wb)};
const workbenchEvents: ${body("/v1/workbench/conversations/{id}/messages", "post", 200, "text/event-stream")}[] = ${lit(workbench.events)};
const interaction: ${body("/v1/workbench/interactions/{id}", "get", 200)} = ${lit(await get(`/v1/workbench/interactions/${interactionId}`))};
const evidenceEvents: ${body("/v1/evidence/conversations/{id}/messages", "post", 200, "text/event-stream")}[] = ${lit(evidence.events)};
const evidenceConversation: ${body("/v1/evidence/conversations/{id}", "get", 200)} = ${lit(await get(`/v1/evidence/conversations/${evc.conversationId}`))};
// What a client does with them: fields are typed, not never/any.
const threadId: string = thread.threadId;
const reply: string | undefined = clinicEvents.flatMap((e) => (e.event === "final" ? [e.data.reply] : []))[0];
const branch: "new_booking" | "price_question" | "general_info" | "medical_question" | "reschedule" | "escalate_human" | null = clinicThread.state.activeBranch;
const answer: string[] = workbenchEvents.flatMap((e) => (e.event === "final" ? [e.data.answer] : []));
const status: string = interaction.status;
const outcome: string[] = evidenceEvents.flatMap((e) => (e.event === "final" ? [e.data.outcome] : []));
export const used = [clinicBody, workbenchBody, wb, evidenceConversation, threadId, reply, branch, answer, status, outcome];
`,
    );
    expect(typecheck([join(dir, "run.ts")])).toEqual([]);

    // Misuse the types must catch: a wrong field type, an unknown field, a missing required field.
    writeFileSync(
      join(dir, "misuse.ts"),
      `import type { paths } from "./api";
const a: ${body("/v1/clinic/threads", "post", 201)} = { threadId: 1 };
const b: ${body("/v1/clinic/threads/{threadId}", "get", 200)}["state"]["activeBranch"] = "dentistry";
const c: ${body("/v1/workbench/interactions/{id}", "get", 200)} = { id: "x" };
export const used = [a, b, c];
`,
    );
    const errors = typecheck([join(dir, "misuse.ts")]);
    expect(errors.map((e) => e.split(": ")[0])).toEqual(["misuse.ts:2", "misuse.ts:3", "misuse.ts:4"]);
    expect(errors[0]).toMatch(/number.*string/);
    expect(errors[1]).toMatch(/dentistry/);
    expect(errors[2]).toMatch(/missing/);

    // The integrator's client from the types alone (issue 34): every run-starting POST takes an
    // Idempotency-Key header, and its stream's headers name X-Run-Id (resume needs it before the
    // first event) as a string, not an index signature's unknown. A misspelt header is a type error.
    const starts = [
      "/v1/clinic/threads/{threadId}/messages",
      "/v1/workbench/conversations/{id}/messages",
      "/v1/evidence/conversations/{id}/messages",
    ];
    writeFileSync(
      join(dir, "headers.ts"),
      `import type { paths } from "./api";
${starts
  .map(
    (p, i) => `type Post${i} = paths["${p}"]["post"];
const send${i}: NonNullable<Post${i}["parameters"]["header"]> = { "Idempotency-Key": "k-${i}" };
declare const read${i}: Post${i}["responses"][200]["headers"]["X-Run-Id"];
const runId${i}: string = read${i};
declare const replayed${i}: Post${i}["responses"][200]["headers"]["Idempotent-Replayed"];
const isReplay${i}: "true" | undefined = replayed${i};
declare const busy${i}: Post${i}["responses"][409]["headers"]["Retry-After"];
const waitBusy${i}: number | undefined = busy${i};
declare const draining${i}: Post${i}["responses"][503]["headers"]["Retry-After"];
const waitDrain${i}: number = draining${i};`,
  )
  .join("\n")}
export const used = [${starts.map((_, i) => `send${i}, runId${i}, isReplay${i}, waitBusy${i}, waitDrain${i}`).join(", ")}];
`,
    );
    expect(typecheck([join(dir, "headers.ts")])).toEqual([]);
    writeFileSync(
      join(dir, "headers-misuse.ts"),
      `import type { paths } from "./api";
const h: NonNullable<paths["${starts[0]}"]["post"]["parameters"]["header"]> = { "Idempotency-Keys": "k" };
export const used = [h];
`,
    );
    expect(typecheck([join(dir, "headers-misuse.ts")]).map((e) => e.split(": ")[0])).toEqual(["headers-misuse.ts:2"]);
  }, 120_000);
});
