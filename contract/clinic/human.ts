import { z } from "zod";

/** The operator who holds a clinic thread (the dialogue machine's `handler.human`; issue 32). */
export const HumanHold = z.object({
  /** The operator's name as the take request gave it (shown to the patient). */
  operator: z.string(),
  /** ISO time of the take. */
  since: z.string(),
  /** The operator's messages since the take (the first one's time is a statistic). */
  replies: z.number().int().nonnegative().default(0),
  /** When the patient was last given the holding reply (issue 43: once, again only after a silence). */
  heldReplyAt: z.string().optional(),
  /** When the holder (or a colleague) last wrote to the patient. */
  lastOperatorAt: z.string().optional(),
});

export type HumanHold = z.output<typeof HumanHold>;
