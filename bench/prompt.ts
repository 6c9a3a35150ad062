import type { Backend } from "./backends";
import type { Goal } from "./goals";
import { HttpClient } from "./http";
import { instantLlm, type ChatRequest, type Script } from "./model";
import { syntheticWorkspace } from "./resolve";
import { bytes, ratio } from "./stats";
import { startBenchServer } from "./targets";

/**
 * prompt: characters sent to the final (ANSWER) model for a Workbench question about one
 * resolved entity in a 1,000-document workspace, against a naive prompt that carries the
 * whole workspace — the same system prompt and question, plus every document as JSON.
 */
export async function benchPrompt(backend: Backend, o: { quick: boolean; log: (l: string) => void }): Promise<Goal[]> {
  const { log } = o;
  const ws = syntheticWorkspace(1_000);
  // A document whose name no other document shares, so the question resolves without asking.
  const counts = new Map<string, number>();
  for (const d of ws.documents)
    counts.set(d.displayName.toLowerCase(), (counts.get(d.displayName.toLowerCase()) ?? 0) + 1);
  const target = ws.documents.find(
    (d) => d.documentType === "Composition" && counts.get(d.displayName.toLowerCase()) === 1,
  )!;
  const question = `Что делает композиция «${target.displayName}»?`;

  const answers: ChatRequest[] = [];
  const script: Script = (role, req) => {
    if (role === "answer") {
      answers.push(req);
      return `Композиция [[${target.identity}]] описана в рабочем пространстве.`;
    }
    return "{}";
  };
  const s = await startBenchServer(backend.db, instantLlm(script), "test");
  const client = new HttpClient(s.started.url);
  try {
    const conv = await client.json<{ conversationId: string }>("POST", "/v1/workbench/conversations");
    if (conv.status !== 201) throw new Error(`workbench conversations: HTTP ${conv.status}`);
    const events: string[] = [];
    const r = await client.sse(
      `/v1/workbench/conversations/${conv.body.conversationId}/messages`,
      { text: question, workspace: ws },
      (e) => events.push(e.event),
    );
    const sent = answers[0];
    if (!sent) {
      log(
        `prompt — the question did not reach the answer model (events: ${events.join(", ")}; closing ${r.closing ?? r.status})`,
      );
      return [{ name: "prompt.chars", ratio: Number.NaN, goal: "≤ 0.05 of the naive prompt", ok: false }];
    }
    const chars = (m: ChatRequest["messages"]) => m.reduce((n, x) => n + x.content.length, 0);
    const actual = chars(sent.messages);
    const system = sent.messages.find((m) => m.role === "system")?.content ?? "";
    const naive = system.length + question.length + JSON.stringify(ws.documents).length;
    const share = actual / naive;
    // A small prompt is only a result if it carries the entity the question is about.
    const grounded = sent.messages.some((m) => m.content.includes(target.identity));
    log(
      `prompt — ${backend.name}: "${question}" on a ${ws.documents.length}-document workspace (${bytes(JSON.stringify(ws).length)} of JSON)`,
    );
    log(
      `  sent to the answer model: ${actual.toLocaleString("en-US")} characters in ${sent.messages.length} messages; naive prompt (same system prompt and question + the whole workspace): ${naive.toLocaleString("en-US")} characters`,
    );
    log(
      `  ratio ${ratio(share)} (${(share * 100).toFixed(2)}%); the resolved document ${target.identity} is ${grounded ? "in" : "MISSING from"} the prompt`,
    );
    return [
      {
        name: "prompt.chars",
        ratio: share,
        goal: "≤ 0.05 of the naive prompt, with the resolved entity in it",
        ok: share <= 0.05 && grounded,
      },
    ];
  } finally {
    client.close();
    await s.close();
  }
}
