// A message made only of format characters (zero-width spaces, joiners, BOM, soft hyphen) and
// separators shows nothing: every message endpoint answers it as an empty message — a structured
// `400 invalid_request` (CONTRACT §6) — and stores nothing (issue 31).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isBlank } from "../../http/user-text";
import { useTestServer } from "../utils/server";

const server = useTestServer();

const INVISIBLE = [
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
  "\u00ad",
  "\u200e",
  "\u2028",
  "\u00a0",
  " ",
  "\t",
  "\n",
];
const blank = fc.array(fc.constantFrom(...INVISIBLE), { minLength: 1, maxLength: 12 }).map((xs) => xs.join(""));

const systems = [
  {
    name: "workbench",
    create: "/v1/workbench/conversations",
    id: "conversationId",
    base: "/v1/workbench/conversations",
  },
  { name: "evidence", create: "/v1/evidence/conversations", id: "conversationId", base: "/v1/evidence/conversations" },
  { name: "clinic", create: "/v1/clinic/threads", id: "threadId", base: "/v1/clinic/threads" },
] as const;

describe("format-only messages are empty messages", () => {
  it("isBlank holds for invisible text only", () => {
    fc.assert(fc.property(blank, (s) => isBlank(s)));
    expect(isBlank("\u200bа\u200b")).toBe(false);
    expect(isBlank("?")).toBe(false);
  });

  it.each(systems)("$name: 400 invalid_request, nothing stored", async (s) => {
    const created = (await (await fetch(`${server.url}${s.create}`, { method: "POST" })).json()) as Record<
      string,
      string
    >;
    const id = created[s.id]!;
    for (const text of [...fc.sample(blank, { numRuns: 6, seed: 31 }), "\u200b\u200b\u200b", "\ufeff"]) {
      const r = await fetch(`${server.url}${s.base}/${id}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text }),
      });
      expect(r.status, JSON.stringify(text)).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
    const after = (await (await fetch(`${server.url}${s.base}/${id}`)).json()) as { messages?: unknown[] };
    expect(after.messages ?? []).toEqual([]);
  });
});
