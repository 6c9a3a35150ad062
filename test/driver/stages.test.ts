import { describe, expect, it } from "vitest";
import { redact } from "../../driver/stages";

describe("redact", () => {
  it("removes credentials by key, by shape and by configured value", () => {
    const out = redact(
      { apiKey: "sk-abcdefghijklmnop", headers: { Authorization: "Bearer abc.def.ghi.jkl" }, note: "ключ sk-zzzzzzzzzzzzzzzz в тексте", tokens: 3, nested: [{ password: "hunter2" }], mine: "eval-token-value" },
      ["eval-token-value"],
    );
    expect(out).toEqual({ apiKey: "[redacted]", headers: { Authorization: "[redacted]" }, note: "ключ [redacted] в тексте", tokens: 3, nested: [{ password: "[redacted]" }], mine: "[redacted]" });
  });
});
