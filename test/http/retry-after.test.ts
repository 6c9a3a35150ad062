import { describe, expect, it } from "vitest";
import { errorStatus } from "../../driver/errors";
import { retryAfterHeader, retryAfterSeconds } from "../../http/retry-after";

describe("Retry-After", () => {
  it("is set for every code answered with 503, and for a busy conversation's 409 only", () => {
    for (const [code, status] of Object.entries(errorStatus))
      if (status === 503) expect(retryAfterSeconds(code), code).toBeGreaterThan(0);
    expect(retryAfterSeconds("conflict", { reason: "conversation_busy" })).toBeGreaterThan(0);
    expect(retryAfterSeconds("conflict", { reason: "idempotency_key_reused" })).toBeUndefined();
    expect(retryAfterSeconds("not_found")).toBeUndefined();
    expect(retryAfterHeader("unavailable")).toEqual({ "retry-after": "5" });
    expect(retryAfterHeader("invalid_request")).toEqual({});
  });
});
