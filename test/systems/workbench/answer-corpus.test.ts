// The Workbench answer check on answers shaped like a real model's (issue 42). For every scenario
// the real answer prompt is captured from the wire (the scripted model server records what the
// project sends); the labelled answers in answer-corpus/ were written to those prompts the way
// deepseek-chat or gpt-4o-mini answers them — true ones in several styles, lies of every kind. Each
// is streamed through the real gate (workbenchAnswerChecker + ValidatedStream + gatedValidation,
// with the options turn.ts builds) and a sample goes through the HTTP turn itself. The per-kind
// table goes to doc/workbench.md#answer-check.
import { beforeAll, describe, expect, it } from "vitest";
import { ValidatedStream } from "../../../driver/validated-stream";
import { contextNumbers } from "../../../systems/workbench/answer-numbers";
import { gatedValidation, workbenchAnswerChecker } from "../../../systems/workbench/answer-checker";
import { passedIdentities, referencedIdentities, type ModelRequest } from "../../../systems/workbench/model-request";
import { fold } from "../../../systems/workbench/text";
import { useTestServer } from "../../utils/server";
import { eventsNamed } from "../../utils/sse";
import { DOC_ANSWERS } from "./answer-corpus/answers-docs";
import { DOCUMENT_ANSWERS } from "./answer-corpus/answers-documents";
import { LIST_ANSWERS } from "./answer-corpus/answers-lists";
import { HELDOUT_ANSWERS } from "./answer-corpus/answers-heldout";
import { MORE_ANSWERS } from "./answer-corpus/answers-more";
import { KEY_ANSWERS } from "./answer-corpus/answers-keys";
import type { Labelled } from "./answer-corpus/labelled";
import { SCENARIOS } from "./answer-corpus/scenarios";
import { corpusWorkspace } from "./answer-corpus/workspace";
import { newConversation, one, send, type Json } from "./http-workbench-helpers";

const CORPUS: Labelled[] = [
  ...DOCUMENT_ANSWERS,
  ...LIST_ANSWERS,
  ...DOC_ANSWERS,
  ...MORE_ANSWERS,
  ...HELDOUT_ANSWERS,
  ...KEY_ANSWERS,
];
const HELDOUT = new Set<Labelled>(HELDOUT_ANSWERS);
const server = useTestServer({ llm: true });
const llm = server.llm;
const prompts = new Map<string, ModelRequest>();
const identities = new Set(corpusWorkspace.documents.map((d) => fold(d.identity)));

/** One turn of a scenario with the answer model scripted to say `answer`. */
async function turn(scenario: string, answer?: string) {
  const s = SCENARIOS.find((x) => x.id === scenario)!;
  llm.reset();
  if (answer !== undefined) llm.script("answer", { content: answer, chunkChars: 7 });
  const conv = await newConversation(server.url);
  const r = await send(server.url, conv, { text: s.message, workspace: corpusWorkspace });
  expect(r.status).toBe(200);
  return r;
}

beforeAll(async () => {
  for (const s of SCENARIOS) {
    await turn(s.id);
    const call = llm.calls.find((c) => c.role === "answer");
    expect(call, `${s.id} reaches the answer model`).toBeDefined();
    prompts.set(s.id, JSON.parse(call!.messages.at(-1)!.content) as ModelRequest);
  }
}, 180_000);

/** What turn.ts does with a streamed answer: shown whole, or refused (replaced). */
function verdict(a: Labelled): { shown: boolean; issues: string[] } {
  const req = prompts.get(a.scenario)!;
  const opts = {
    exists: (id: string) => identities.has(fold(id)),
    passed: passedIdentities(req),
    referenced: referencedIdentities(req),
    numbers: contextNumbers(req),
  };
  const checker = workbenchAnswerChecker(opts);
  let streamed = "";
  const gate = new ValidatedStream(checker, (d) => (streamed += d));
  for (let i = 0; i < a.text.length; i += 7) gate.push(a.text.slice(i, i + 7));
  const gated = gate.end();
  const v = gatedValidation(a.text, opts, checker.rejected);
  const shown = gated.ok && v.ok;
  if (shown) expect(streamed).toBe(a.text);
  return { shown, issues: v.issues.map((i) => `${i.code}${i.detail ? `: ${i.detail}` : ""}`) };
}

describe("Workbench answer corpus (issue 42)", () => {
  it("holds ≥ 300 labelled answers over ≥ 15 scenarios, each answering a captured prompt", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    const used = new Set(CORPUS.map((a) => a.scenario));
    expect(used.size).toBeGreaterThanOrEqual(15);
    for (const id of used) expect(prompts.has(id), id).toBe(true);
  });

  it("shows ≥ 99 % of true answers unchanged and refuses every lie, per kind", () => {
    const rows = new Map<string, { label: string; kind: string; cases: number; right: number }>();
    const wrong: string[] = [];
    // the held-out round (answers-heldout.ts) is reported on its own too: its "before" numbers were taken
    // on the checker as it stood when the round was written
    const held = { true: 0, trueShown: 0, lie: 0, lieRefused: 0 };
    for (const a of CORPUS) {
      const { shown, issues } = verdict(a);
      const right = a.label === "true" ? shown : !shown;
      if (HELDOUT.has(a)) {
        held[a.label]++;
        if (right) held[a.label === "true" ? "trueShown" : "lieRefused"]++;
      }
      // a lie's kind is what it lies about; a true answer's, its style («units-words» is a units answer)
      const kind = a.label === "lie" ? a.kind : a.kind.replace(/-.*$/, "");
      const key = `${a.label} ${kind}`;
      const row = rows.get(key) ?? { label: a.label, kind, cases: 0, right: 0 };
      row.cases++;
      if (right) row.right++;
      rows.set(key, row);
      if (!right)
        wrong.push(
          `[${a.label} ${a.kind} @ ${a.scenario}] ${a.text.replace(/\n/g, " ⏎ ")} → ${issues.join("; ") || "shown"}`,
        );
    }
    const table = [...rows.values()]
      .sort((x, y) => x.label.localeCompare(y.label) || x.kind.localeCompare(y.kind))
      .map((r) => ({
        answers: r.label === "true" ? "true" : "lie",
        kind: r.kind,
        cases: r.cases,
        [r.label === "true" ? "shown" : "refused"]: r.right,
        rate: `${((100 * r.right) / r.cases).toFixed(1)} %`,
      }));
    console.table(table);
    const truths = CORPUS.filter((a) => a.label === "true");
    const lies = CORPUS.filter((a) => a.label === "lie");
    const shownTrue = truths.length - wrong.filter((w) => w.startsWith("[true")).length;
    const refused = lies.length - wrong.filter((w) => w.startsWith("[lie")).length;
    console.log(
      `true answers shown: ${shownTrue}/${truths.length} (${((100 * shownTrue) / truths.length).toFixed(1)} %); lies refused: ${refused}/${lies.length} (${((100 * refused) / lies.length).toFixed(1)} %)`,
    );
    console.log(
      `held-out round: true shown ${held.trueShown}/${held.true}; lies refused ${held.lieRefused}/${held.lie}`,
    );
    if (wrong.length) console.log(wrong.join("\n"));
    expect(shownTrue / truths.length, wrong.join("\n")).toBeGreaterThanOrEqual(0.99);
    expect(refused, wrong.join("\n")).toBe(lies.length);
  });

  it("through the HTTP turn: a true answer streams whole, a lie is replaced before `final`", async () => {
    for (const s of SCENARIOS) {
      const truth = CORPUS.find((a) => a.scenario === s.id && a.label === "true")!;
      const ok = await turn(s.id, truth.text);
      expect(one(ok, "answer_replaced"), truth.text).toBeUndefined();
      expect(one(ok, "final")!.answer).toBe(truth.text);
      const lie = CORPUS.find((a) => a.scenario === s.id && a.label === "lie")!;
      const bad = await turn(s.id, lie.text);
      const replaced = one(bad, "answer_replaced") as Json | undefined;
      expect(replaced, lie.text).toBeDefined();
      expect(one(bad, "final")!.answer).toBe(replaced!.text);
      expect((eventsNamed(bad, "token") as Json[]).map((e) => e.delta).join("")).not.toContain(lie.text);
    }
  }, 180_000);
});
