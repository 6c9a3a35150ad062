import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDemoKnowledgeBase } from "../../systems/clinic/demo-kb";
import { useTestServer } from "../utils/server";

/**
 * client/ as an installable package (issue 45): client/npm/build.mjs builds it, `npm pack` packs
 * it, the tarball installs offline into a scratch project (its one dependency already there), and
 * that project — plain Node, no TypeScript loader, nothing of this repository on its path — runs a
 * clinic turn against a real server; a typed script against the installed types type-checks.
 */
const run = promisify(execFile);
const ROOT = resolve(__dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "client-package-"));
const app = join(dir, "app");

const server = useTestServer();
beforeAll(async () => {
  await loadDemoKnowledgeBase(server.db.sql);
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the client package", () => {
  it("packs, installs offline into a scratch project and runs a turn", { timeout: 120_000 }, async () => {
    await run(process.execPath, [join(ROOT, "client/npm/build.mjs"), join(dir, "pkg")]);
    await run("npm", ["pack", "./pkg", "--ignore-scripts", "--pack-destination", "."], { cwd: dir });
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"))!;
    expect(tarball).toMatch(/^dialogue-statecharts-client-\d+\.\d+\.\d+\.tgz$/);

    mkdirSync(join(app, "node_modules"), { recursive: true });
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    // The dependency is satisfied already, so the install needs no registry.
    cpSync(join(ROOT, "node_modules/eventsource-parser"), join(app, "node_modules/eventsource-parser"), {
      recursive: true,
    });
    await run("npm", ["install", `../${tarball}`, "--offline", "--no-audit", "--no-fund"], { cwd: app });

    writeFileSync(
      join(app, "turn.mjs"),
      `import { createClient } from "@dialogue-statecharts/client";
const api = createClient({ baseUrl: process.argv[2] });
const { threadId } = await api.clinic.create();
const { final } = await api.clinic.send(threadId, "Какой у вас адрес?").result();
console.log(JSON.stringify({ threadId, reply: final.reply }));
`,
    );
    const { stdout } = await run(process.execPath, ["turn.mjs", server.url], { cwd: app });
    const out = JSON.parse(stdout) as { threadId: string; reply: string };
    expect(out.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.reply).toContain("ул. Примерная");

    // The built types, as a TypeScript user of the package sees them (zod for types only).
    symlinkSync(join(ROOT, "node_modules/zod"), join(app, "node_modules/zod"), "dir");
    writeFileSync(
      join(app, "typed.ts"),
      `import { createClient, type ClinicEvent } from "@dialogue-statecharts/client";
const api = createClient({ baseUrl: "http://127.0.0.1:3000" });
export async function ask(): Promise<string | undefined> {
  const { threadId } = await api.clinic.create();
  const id: string = threadId;
  const seen: ClinicEvent["event"][] = [];
  const turn = api.clinic.send(id, "Какой у вас адрес?");
  for await (const e of turn) seen.push(e.event);
  return (await turn.result()).final?.reply;
}
// @ts-expect-error a thread id is a string
api.clinic.send(42, "x");
`,
    );
    const program = ts.createProgram([join(app, "typed.ts")], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
      types: [],
      skipLibCheck: true,
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, " "));
    expect(diagnostics).toEqual([]);
  });
});
