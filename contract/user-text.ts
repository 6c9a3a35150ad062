// What a user types, as every message body reads it: trimmed, not empty, bounded. "Empty" means
// nothing visible: a message made only of format characters (zero-width space, joiners, BOM, soft
// hyphen — Unicode category Cf) and separators is empty too, so it gets `400 invalid_request`
// (CONTRACT §6) instead of reaching a planner, a router or a model as if it were a request.
import { z } from "zod";

const INVISIBLE = /[\p{Cf}\p{Z}\s]/gu;

/** True when the text shows nothing: only whitespace, separators and format characters. */
export const isBlank = (s: string) => s.replace(INVISIBLE, "").length === 0;

export function userText(max: number, messages: { empty: string; tooLong: string }) {
  return z
    .string()
    .trim()
    .min(1, messages.empty)
    .max(max, messages.tooLong)
    .refine((s) => !isBlank(s), { message: messages.empty });
}
