import { BranchCode, branchCodes } from "./types";

/**
 * The router answers one intent code, or JSON `{"intent": "…"}` (CONTRACT §5.2). Anything else is
 * no decision (null): the dialogue then stays where it is rather than trusting a guess.
 */
export function parseRouterOutput(raw: string): BranchCode | null {
  // Codes are lower_snake_case; a router answering PRICE_QUESTION means the same.
  const text = raw
    .trim()
    .replace(/^```(?:json)?\s*|\s*```$/g, "")
    .trim()
    .toLowerCase();
  if (text.startsWith("{")) {
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === "object" && "intent" in value) {
        const r = BranchCode.safeParse(String((value as { intent: unknown }).intent).trim());
        return r.success ? r.data : null;
      }
    } catch {
      return null;
    }
    return null;
  }
  const bare = text.replace(/^["'`]+|["'`.!]+$/g, "").trim();
  const exact = BranchCode.safeParse(bare);
  if (exact.success) return exact.data;
  // A chatty router ("Intent: price_question") still names exactly one code.
  const named = branchCodes.filter((c) => new RegExp(`(^|[^a-z_])${c}([^a-z_]|$)`).test(text));
  return named.length === 1 ? named[0]! : null;
}
