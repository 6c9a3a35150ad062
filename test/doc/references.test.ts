import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { checkMarkdown, ENV_ALLOWLIST, loadRepo } from "./references";

const root = resolve(import.meta.dirname, "../..");
const repo = loadRepo(root);
const docs = [
  "README.md",
  ...readdirSync(join(root, "doc"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `doc/${f}`),
];

describe("README.md and doc/*.md point only at what the repository holds", () => {
  it.each(docs)("%s", (file) => {
    expect(checkMarkdown(file, readFileSync(join(root, file), "utf8"), repo)).toEqual([]);
  });

  it("README.md stays under 15 KB", () => {
    expect(statSync(join(root, "README.md")).size).toBeLessThanOrEqual(15 * 1024);
  });

  it("every allowlisted setting is one the code does not read by name (else drop it from the list)", () => {
    for (const name of Object.keys(ENV_ALLOWLIST)) expect(repo.source).not.toContain(name);
  });
});

describe("the checker fails on a broken document", () => {
  const broken = [
    "See [the spec](../../shared/seeds/001.md) and [gone](missing.md) and [here](#nowhere).",
    "Machines live in `machines/`; tests in `test/workbench`; the chat is `scripts/chat.ts`.",
    "Set `STATELY_INSPECT_POLL_MS` (or `LLM_MODEL_<ROLE>`, `NOT_A_SETTING_<ROLE>`), as CONTRACT §3.1 says.",
    "Run `npm run no-such-script`, then `npm run chat`.",
    "```sh",
    "node ../shared/eval/run.mjs --project .",
    "NO_SUCH_SETTING=1 npx vitest run test/server/workbench.test.ts test/systems/workbench",
    "```",
    "# A heading",
  ].join("\n");
  const problems = checkMarkdown("doc/broken.md", broken, repo);

  it.each([
    "link outside the repository: ../../shared/seeds/001.md",
    "link to a missing file: missing.md",
    "no heading for #nowhere",
    "no such path: `machines/`",
    "no such path: `test/workbench`",
    "setting `STATELY_INSPECT_POLL_MS` is read nowhere in the code",
    "setting `NOT_A_SETTING_<ROLE>` is read nowhere in the code",
    'section reference to a document outside the repository: "CONTRACT §3.1"',
    "npm run no-such-script: no such script in package.json",
    "points outside the repository: ../shared/eval/run.mjs",
    "setting NO_SUCH_SETTING is read nowhere in the code",
    "no such path in a command: test/server/workbench.test.ts",
  ])("reports: %s", (problem) => {
    expect(problems).toContain(`doc/broken.md: ${problem}`);
  });

  it("and reports nothing else: the sound references in it pass", () => {
    expect(problems).toHaveLength(12);
  });

  it("passes a sound document", () => {
    const sound = [
      "[Ops](operations.md#probes) and [the README](../README.md), `systems/<name>/contract.ts`, `test/systems/*`,",
      "`LLM_MODEL_<ROLE>`, `DATABASE_URL=postgres://…`, `DATA_DIR/server.lock`, `text/event-stream`, `xstate/graph`,",
      "`.data/diagrams/`, `npm run chat`, `npm start`.",
      "```sh",
      "LLM_MODEL=x npx vitest run test/doc  # a comment naming ../elsewhere is still outside",
      "```",
    ].join("\n");
    expect(checkMarkdown("doc/sound.md", sound, repo)).toEqual(
      [
        "doc/sound.md: link to a missing file: operations.md#probes",
        "doc/sound.md: points outside the repository: ../elsewhere",
      ].filter((p) => !p.includes("operations.md") || !repo.paths.has("doc/operations.md")),
    );
  });
});
