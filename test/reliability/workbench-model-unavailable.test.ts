import type { Sql } from "../../storage/db";
import { describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { eventsNamed, postSse, readSse } from "../utils/sse";
import { workspace } from "../systems/workbench/fixtures";
import { useServerProcesses, readStorage } from "./processes";
import { newConversation } from "../systems/workbench/http-workbench-helpers";

/**
 * A Workbench run whose answer model stays unavailable (500 twice) under a real server process:
 * the client gets `error` (model_unavailable) then `done` (CONTRACT.md), the Interaction is
 * failed with the question kept, and the run is stored `failed` with error_code
 * model_unavailable — not `completed` — so /v1/stats/outcomes counts it among the failed.
 */
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";

const fx = useServerProcesses();
const llm = fx.llm;

type Stats = {
  byKind: { kind: string; runs: number; completed: number; failed: number }[];
  byOutcomeClass: { kind: string; outcomeClass: string; runs: number }[];
  byReasonCode: { kind: string; reasonCode: string; runs: number }[];
};

async function runRow(runId: string) {
  const read = (sql: Sql) =>
    sql<{ status: string; error_code: string | null; outcome: string | null }[]>`
      select status, error_code, outcome from runs where id = ${runId}`.then((r) => r[0]);
  return readStorage(fx.storage, read);
}

describe(`Workbench run ending model_unavailable (real server process, ${backend})`, () => {
  it("is stored failed with error_code model_unavailable; the client sees error then done; stats count it failed", async () => {
    const base = fx.server.url;
    const conv = await newConversation(base);
    // One answered turn first: a completed run to tell apart from the failed one in the stats.
    llm.script("answer", "Композиция [[composition-alpha]] лежит в папке [[folder-sales]].");
    const ok = await postSse(`${base}/v1/workbench/conversations/${conv}/messages`, {
      text: "Покажи composition-alpha",
      workspace,
    });
    expect(eventsNamed(ok, "final")).toHaveLength(1);

    llm.reset();
    llm.script("answer", { status: 500 }, { status: 500 });
    const r = await postSse(`${base}/v1/workbench/conversations/${conv}/messages`, {
      text: "Покажи composition-alpha ещё раз",
      workspace,
    });
    expect(llm.count("answer")).toBe(2);
    expect(r.status).toBe(200);
    expect(r.events.slice(-2).map((e) => e.event)).toEqual(["error", "done"]);
    expect(eventsNamed(r, "error")[0]).toMatchObject({ code: "model_unavailable" });
    expect(eventsNamed(r, "final")).toHaveLength(0);
    const started = eventsNamed(r, "run_started")[0] as { runId: string; interactionId: string };
    const interaction = (await (await fetch(`${base}/v1/workbench/interactions/${started.interactionId}`)).json()) as {
      status: string;
    };
    expect(interaction.status).toBe("failed");

    // A client resuming the run from the start replays the same ending.
    const replay = await readSse(
      await fetch(`${base}/v1/runs/${started.runId}/events`, { headers: { "last-event-id": "0" } }),
    );
    expect(replay.events.slice(-2).map((e) => e.event)).toEqual(["error", "done"]);

    const stats = (await (await fetch(`${base}/v1/stats/outcomes?kind=workbench`)).json()) as Stats;
    expect(stats.byKind).toEqual([{ kind: "workbench", runs: 2, completed: 1, failed: 1 }]);
    expect(stats.byOutcomeClass).toContainEqual({ kind: "workbench", outcomeClass: "BLOCKED_BY_TOOLING", runs: 1 });
    expect(stats.byReasonCode).toContainEqual({ kind: "workbench", reasonCode: "model_unavailable", runs: 1 });

    // The run's row, read in the database (PGlite: once the process has let go of the folder).
    if (!fx.storage.url) await fx.server.stop();
    expect(await runRow(started.runId)).toEqual({
      status: "failed",
      error_code: "model_unavailable",
      outcome: "failed",
    });
  });
});
