import { DAYS, DeskSettings } from "../../contract/clinic/desk";

export { DAYS, DeskSettings };

/**
 * The clinic's front desk (issue 43): when people are there to answer, and how the bot behaves
 * while one of them holds a thread. Pure helpers over the settings (the clock comes in as an
 * argument, so a turn's verdict is decided once and logged with its event).
 */

/**
 * Until an admin sets the hours, the desk is open around the clock (what the bot promised before
 * issue 43); a clinic that sets them gets honest promises at night.
 */
const allDay = { open: "00:00", close: "24:00" };
export const DEFAULT_DESK: DeskSettings = {
  timezone: "Europe/Moscow",
  hours: { mon: allDay, tue: allDay, wed: allDay, thu: allDay, fri: allDay, sat: allDay, sun: allDay },
  answerWithinMinutes: 60,
  holdingRepeatMinutes: 30,
};

/** The desk at a moment: open or not, and what an escalation may promise then. */
export interface DeskNow {
  open: boolean;
  /** «в течение ближайшего часа» / «в рабочее время — завтра с 09:00». */
  promise: string;
  /** How long a held thread's patient waits before the holding reply is repeated. */
  holdingRepeatMs: number;
}

const DAY_RU = ["в понедельник", "во вторник", "в среду", "в четверг", "в пятницу", "в субботу", "в воскресенье"];

/**
 * One formatter per time zone: building an Intl.DateTimeFormat loads locale and zone data and
 * cost ~5 % of a clinic turn's CPU when it was built on every turn (doc/bench.md, issue 46).
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone: tz,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(tz, f);
  }
  return f;
}

/**
 * The last minute read per time zone: every turn asks, and formatToParts cost ≈ 20 µs of a turn
 * (doc/bench.md, issue 46). A zone's offset changes only on a whole minute, so the weekday and
 * the minutes since midnight are the same for every instant of one UTC minute.
 */
const lastMinute = new Map<string, { minute: number; local: { day: number; minutes: number } }>();

/** The weekday (0 = Monday) and the minutes since midnight of `at` in `tz`. */
export function localTime(at: Date, tz: string): { day: number; minutes: number } {
  const minute = Math.floor(at.getTime() / 60_000);
  const seen = lastMinute.get(tz);
  if (seen?.minute === minute) return seen.local;
  const local = readLocalTime(at, tz);
  lastMinute.set(tz, { minute, local });
  return local;
}

export function readLocalTime(at: Date, tz: string): { day: number; minutes: number } {
  const parts = formatterFor(tz).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  const day = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(get("weekday"));
  return { day, minutes: Number(get("hour")) * 60 + Number(get("minute")) };
}

const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

function within(minutes: number): string {
  if (minutes === 60) return "в течение ближайшего часа";
  if (minutes % 60 === 0) return `в течение ${minutes / 60} ч`;
  return `в течение ${minutes} минут`;
}

export function deskAt(s: DeskSettings, at: Date): DeskNow {
  const holdingRepeatMs = s.holdingRepeatMinutes * 60_000;
  const { day, minutes } = localTime(at, s.timezone);
  const today = s.hours[DAYS[day]!];
  if (today && minutes >= toMinutes(today.open) && minutes < toMinutes(today.close))
    return { open: true, promise: within(s.answerWithinMinutes), holdingRepeatMs };
  // The next opening: later today, else the first open day after it.
  for (let ahead = 0; ahead < 8; ahead++) {
    const d = (day + ahead) % 7;
    const h = s.hours[DAYS[d]!];
    if (!h || (ahead === 0 && minutes >= toMinutes(h.open))) continue;
    const when = ahead === 0 ? "сегодня" : ahead === 1 ? "завтра" : DAY_RU[d]!;
    return { open: false, promise: `в рабочее время — ${when} с ${h.open}`, holdingRepeatMs };
  }
  return { open: false, promise: "в рабочее время клиники", holdingRepeatMs };
}

/** What escalation replies promise by default (the seed's prompt, the loop guard's template, the offline model). */
const PROMISE = /в течение (ближайшего )?часа|в ближайший час|в течение \d+ (минут|мин\.?|ч)/giu;

/**
 * An escalation reply out of hours (issue 43): a promise of an answer within the hour becomes the
 * desk's next opening; a reply that promised nothing gets the opening said. Within hours, as is.
 */
export function keepPromise(reply: string, desk: DeskNow): string {
  if (desk.open) return reply;
  const closed = `Сейчас клиника закрыта: администратор ответит ${desk.promise}.`;
  if (PROMISE.test(reply)) {
    PROMISE.lastIndex = 0;
    return reply.replace(PROMISE, desk.promise);
  }
  return reply ? `${reply}\n\n${closed}` : closed;
}
