import { z } from "zod";

/**
 * The clinic's front desk on the wire (GET/POST /v1/clinic/desk; systems/clinic/desk.ts reads it):
 * working hours in the clinic's time zone, the promise within hours, the quiet of a held thread.
 */

const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, "время как ЧЧ:ММ");
const Day = z
  .object({ open: HHMM, close: HHMM })
  .nullable()
  .refine((d) => d === null || d.open < d.close, "open раньше close");
export const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

export const DeskSettings = z
  .object({
    /** IANA time zone of the clinic (the hours are local to it). */
    timezone: z.string().refine(validZone, "неизвестный часовой пояс (IANA, напр. Europe/Moscow)"),
    /** Per weekday: when the desk answers; null: closed all day. */
    hours: z.object(Object.fromEntries(DAYS.map((d) => [d, Day])) as Record<(typeof DAYS)[number], typeof Day>),
    /** Within working hours, the promise: an answer within this many minutes. */
    answerWithinMinutes: z
      .number()
      .int()
      .min(1)
      .max(24 * 60),
    /** While an operator holds a thread: the holding reply again only after this much silence. */
    holdingRepeatMinutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60),
  })
  .meta({
    examples: [
      {
        timezone: "Europe/Moscow",
        hours: {
          mon: { open: "09:00", close: "20:00" },
          tue: { open: "09:00", close: "20:00" },
          wed: { open: "09:00", close: "20:00" },
          thu: { open: "09:00", close: "20:00" },
          fri: { open: "09:00", close: "20:00" },
          sat: { open: "10:00", close: "16:00" },
          sun: null,
        },
        answerWithinMinutes: 60,
        holdingRepeatMinutes: 30,
      },
    ],
  });
export type DeskSettings = z.infer<typeof DeskSettings>;

function validZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
