import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { loadDemoKnowledgeBase } from "../../systems/clinic/demo-kb";
import { useTestServer } from "../utils/server";

/**
 * The README's examples, run as written (bash + curl) against a server started as `npm start`
 * starts it: no model configured (the offline provider), no token. A newcomer who copies them gets
 * what their comments promise: a clinic answer, a Workbench clarification and its answer with the
 * chosen document, and a document named by its title answered with its citation and a passed check.
 */

const server = useTestServer();
beforeAll(async () => {
  // As `npm start` leaves a fresh data directory: with the demo knowledge base (main.ts).
  await loadDemoKnowledgeBase(server.db.sql);
});

/** The ```sh blocks of the README section whose heading starts with `heading`, in order. */
function shBlocks(heading: string): string[] {
  const readme = readFileSync("README.md", "utf8");
  const start = readme.indexOf(`\n## ${heading}`);
  if (start < 0) throw new Error(`README has no section «${heading}»`);
  const end = readme.indexOf("\n## ", start + 4);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

// Asynchronous: the server answering the script runs in this process.
const run = async (script: string) =>
  (
    await promisify(execFile)(
      "bash",
      ["-euo", "pipefail", "-c", script.replaceAll("localhost:3000", server.url.replace(/^http:\/\//, ""))],
      {
        encoding: "utf8",
        timeout: 60_000,
      },
    )
  ).stdout;

describe("README examples, run as written", () => {
  it("clinic: one turn with curl streams run_started … final … done", async () => {
    const out = await run(shBlocks("Clinic").join("\n"));
    for (const e of ["event: run_started", "event: token", "event: final", "event: done"]) expect(out).toContain(e);
    expect(out).not.toContain("event: error");
    // The first question is answered from the demo knowledge base, offline.
    expect(out).toContain("ул. Примерная");
  });

  it("Workbench: the clarification, its answer citing the archived document, and a form named by its title", async () => {
    const out = await run(shBlocks("Workbench").join("\n"));
    expect(out).not.toContain("event: error");
    const finals = out
      .split("event: final\ndata: ")
      .slice(1)
      .map((s) => JSON.parse(s.split("\n")[0]!));
    expect(finals).toHaveLength(2);
    expect(finals[0].entityCitations).toContain("composition-delivery-cost-2023");
    expect(finals[1].answer).toContain("form-shipment");
    expect(finals[1].validation).toMatchObject({ ok: true, issues: [] });
  });
});
