// The corpus of answers shaped like a real model's (issue 42). For each scenario of
// corpus-scenarios.ts the answer prompt the project sends is captured from the scripted model
// server over the real HTTP turn and compared with the stored one
// (test/fixtures/evidence-replies/<name>.prompt.json): a change of the prompt fails here until it is
// recaptured (EVIDENCE_RECAPTURE=1) and the replies are read again against the new prompt. The
// replies (<name>.replies.ts) were written by hand after reading the stored prompt, the way
// deepseek-chat or gpt-4o-mini answers it; each is judged by the functions the turn uses
// (`parseStructured`, `resolveChoice`, `packageOf`), and a sample also goes through the HTTP turn,
// which must stream exactly that rendering and nothing it later replaces.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { evidenceMcpHttpHandler } from "../../../systems/evidence/mcp-server/server";
import { closeEvidenceMcp, useEvidenceMcp } from "../../../systems/evidence/routes";
import type { ScriptStep } from "../../utils/scripted-llm";
import { useFetchServers, useTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";
import type { ClaimsMenu } from "../../../systems/evidence/claims-menu";
import { CORPUS_SCENARIOS, type CorpusScenario } from "./corpus-scenarios";
import { judgeReply, type CorpusReply, type Label } from "./corpus-judge";

/** Set to 1 to write the prompts the project sends now over the stored ones (then read the replies again). */
const RECAPTURE = process.env.EVIDENCE_RECAPTURE === "1";
/** How many replies of each label per scenario also go through the HTTP turn (the rest: the same functions). */
const HTTP_SAMPLE = 2;
const DIR = join(import.meta.dirname, "../../fixtures/evidence-replies");

const A = { authorization: "Bearer tok-a" };
const app = useTestServer({ llm: true, tokens: "a:tok-a" });
const llm = app.llm;
const serveFetch = useFetchServers();
// Declared after the server's hooks, so it runs before the server stops: the MCP client closes first.
afterAll(() => closeEvidenceMcp(app.deps).catch(() => {}));

/** The demo MCP server with the scenario's faults, on a port of its own. */
const faultyServer = async (s: CorpusScenario): Promise<string> =>
  `${await serveFetch(evidenceMcpHttpHandler(app.db.sql, s.faults))}/mcp`;

type Final = { outcome: string; runId: string; answer: string; validation: { ok: boolean; issues: string[] } };
export interface StoredPrompt {
  scenario: string;
  turns: string[];
  outcome: string;
  /** The system message of the answer call, as sent. */
  system: string;
  /** The answer call's user message, parsed (it is the step's JSON input). */
  input: { menu: { id: string; kind: string; text: string }[] } & Record<string, unknown>;
}

/** One conversation over HTTP; the last turn's answer reply is scripted (none: the engine's own choice). */
async function converse(s: CorpusScenario, answer?: ScriptStep) {
  const mcp = s.faults
    ? { endpoint: { kind: "http" as const, url: await faultyServer(s) }, timeoutMs: s.timeoutMs }
    : { endpoint: { kind: "http" as const, url: `${app.url}/v1/evidence/mcp`, headers: A } };
  await useEvidenceMcp(app.deps, mcp);
  llm.reset();
  const created = await fetch(`${app.url}/v1/evidence/conversations`, { method: "POST", headers: A });
  const id = ((await created.json()) as { conversationId: string }).conversationId;
  let from = 0;
  let last!: Awaited<ReturnType<typeof postSse>>;
  for (const [k, text] of s.turns.entries()) {
    const lastTurn = k === s.turns.length - 1;
    if (lastTurn) {
      from = llm.calls.length;
      if (s.planner?.length) llm.script("planner", ...s.planner);
      if (answer) llm.script("answer", answer);
    }
    last = await postSse(`${app.url}/v1/evidence/conversations/${id}/messages`, { text }, A);
    expect(eventsNamed(last, "error"), `${s.name}: ${text}`).toEqual([]);
  }
  const final = eventsNamed(last, "final")[0] as unknown as Final;
  const call = llm.calls.slice(from).find((c) => c.role === "answer");
  const run = (await (await fetch(`${app.url}/v1/evidence/runs/${final.runId}`, { headers: A })).json()) as {
    artifacts: { claims_menu: ClaimsMenu };
  };
  const tokens = eventsNamed(last, "token")
    .map((e) => e.delta)
    .join("");
  return { final, call, menu: run.artifacts.claims_menu, tokens, replaced: eventsNamed(last, "answer_replaced") };
}

const promptFile = (name: string) => join(DIR, `${name}.prompt.json`);
const loadReplies = async (name: string): Promise<CorpusReply[]> =>
  existsSync(join(DIR, `${name}.replies.ts`))
    ? ((await import(`../../fixtures/evidence-replies/${name}.replies.ts`)) as { default: CorpusReply[] }).default
    : [];

type Row = { label: Label; cases: number; ok: number; misses: string[] };
const rows = new Map<string, Row>();
let http = 0;

describe("the Evidence answer corpus: captured prompts, hand-written replies", () => {
  for (const s of CORPUS_SCENARIOS)
    it(`${s.name}: the prompt is the stored one; its replies are shown as chosen or refused`, async () => {
      const captured = await converse(s);
      expect(captured.call, `${s.name}: no answer call`).toBeDefined();
      const [system, user] = [captured.call!.messages[0]!.content, captured.call!.messages.at(-1)!.content];
      const now: StoredPrompt = {
        scenario: s.name,
        turns: s.turns,
        outcome: captured.final.outcome,
        system,
        input: JSON.parse(user) as StoredPrompt["input"],
      };
      if (RECAPTURE || !existsSync(promptFile(s.name)))
        writeFileSync(promptFile(s.name), `${JSON.stringify(now, null, 2)}\n`);
      const stored = JSON.parse(readFileSync(promptFile(s.name), "utf8")) as StoredPrompt;
      // What the project sends now is what the replies were written against (else: recapture and read again).
      expect(
        now,
        `${s.name}: the answer prompt changed — run with EVIDENCE_RECAPTURE=1 and reread the replies`,
      ).toEqual(stored);
      expect(captured.menu.claims.map((c) => c.id)).toEqual(stored.input.menu.map((c) => c.id));

      const replies = await loadReplies(s.name);
      for (const r of replies) {
        const v = judgeReply(captured.menu, r);
        const row = rows.get(r.kind) ?? { label: r.label, cases: 0, ok: 0, misses: [] };
        row.cases++;
        if (v.ok) row.ok++;
        else row.misses.push(`${s.name}: ${r.content.slice(0, 300)} → ${v.why}`);
        rows.set(r.kind, row);
      }
      // A sample of each label through the HTTP turn: what streams is exactly the function's rendering, nothing replaced.
      for (const label of ["true", "lie"] as const)
        for (const r of replies
          .filter((x) => x.label === label)
          .filter((_, k, xs) => k % Math.ceil(xs.length / HTTP_SAMPLE) === 0)) {
          const x = await converse(s, { content: r.content });
          expect(x.replaced).toEqual([]);
          expect(x.tokens).toBe(x.final.answer);
          expect(x.final.answer, `${s.name}: ${r.kind}`).toBe(judgeReply(captured.menu, r).rendered);
          http++;
        }
    }, 120_000);

  it("per kind: ≥ 99 % of true replies shown as chosen, every lie refused", () => {
    const table = [...rows.entries()]
      .sort(([, a], [, b]) => a.label.localeCompare(b.label))
      .map(([kind, r]) => ({
        label: r.label,
        kind,
        cases: r.cases,
        ok: r.ok,
        rate: `${((100 * r.ok) / r.cases).toFixed(1)} %`,
      }));
    console.table(table);
    const total = (l: Label) => [...rows.values()].filter((r) => r.label === l).reduce((s, r) => s + r.cases, 0);
    const ok = (l: Label) => [...rows.values()].filter((r) => r.label === l).reduce((s, r) => s + r.ok, 0);
    console.log(
      `true: ${ok("true")}/${total("true")} shown, lies: ${ok("lie")}/${total("lie")} refused, over HTTP: ${http}`,
    );
    const misses = [...rows.entries()].flatMap(([kind, r]) => r.misses.map((m) => `[${r.label}] ${kind}: ${m}`));
    if (misses.length) console.log(misses.join("\n"));
    expect(total("true")).toBeGreaterThanOrEqual(150);
    expect(total("lie")).toBeGreaterThanOrEqual(150);
    expect(ok("true") / total("true"), misses.join("\n")).toBeGreaterThanOrEqual(0.99);
    expect(ok("lie"), misses.join("\n")).toBe(total("lie"));
  });
});
