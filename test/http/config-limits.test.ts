import { describe, expect, it } from "vitest";
import { loadConfig } from "../../http/config";

describe("model limits from the environment", () => {
  it("reads the global and per-role reply cap and total deadline; unset stays unset (DEFAULT_LIMITS apply)", () => {
    const c = loadConfig({
      LLM_MAX_REPLY_CHARS: "1000",
      LLM_TOTAL_TIMEOUT_MS_ANSWER: "90000",
      LLM_MAX_REPLY_CHARS_ROUTER: "200",
    });
    expect(c.llm.limits).toEqual({ maxReplyChars: 1000 });
    expect(c.llm.roleLimits).toEqual({ answer: { totalTimeoutMs: 90000 }, router: { maxReplyChars: 200 } });
    expect(loadConfig({}).llm).toMatchObject({ limits: {}, roleLimits: {} });
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => loadConfig({ LLM_TOTAL_TIMEOUT_MS: "0" })).toThrow(/LLM_TOTAL_TIMEOUT_MS/);
    expect(() => loadConfig({ LLM_MAX_REPLY_CHARS_BRANCH: "lots" })).toThrow(/LLM_MAX_REPLY_CHARS_BRANCH/);
  });
});
