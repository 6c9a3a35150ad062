import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_DESK,
  deskAt,
  DeskSettings,
  keepPromise,
  localTime,
  readLocalTime,
} from "../../../systems/clinic/desk";
import { heldAnswer, HOLD_ACK, holdingReply } from "../../../systems/clinic/human";

const weekday = { open: "09:00", close: "20:00" };
const clinic: DeskSettings = {
  timezone: "Europe/Moscow",
  hours: {
    mon: weekday,
    tue: weekday,
    wed: weekday,
    thu: weekday,
    fri: weekday,
    sat: { open: "10:00", close: "16:00" },
    sun: null,
  },
  answerWithinMinutes: 60,
  holdingRepeatMinutes: 30,
};
// 2026-12-07 is a Monday; Moscow is UTC+3.
const msk = (iso: string) => new Date(`${iso}+03:00`);

describe("the front desk's hours decide the promise", () => {
  it.each([
    ["2026-12-07T12:00:00", true, "в течение ближайшего часа"],
    ["2026-12-07T03:00:00", false, "в рабочее время — сегодня с 09:00"],
    ["2026-12-07T20:00:00", false, "в рабочее время — завтра с 09:00"],
    ["2026-12-12T17:30:00", false, "в рабочее время — в понедельник с 09:00"],
    ["2026-12-13T11:00:00", false, "в рабочее время — завтра с 09:00"],
    ["2026-12-12T10:00:00", true, "в течение ближайшего часа"],
  ])("%s → open %s, «%s»", (local, open, promise) => {
    expect(deskAt(clinic, msk(local))).toMatchObject({ open, promise, holdingRepeatMs: 30 * 60_000 });
  });

  it("reads the hours in the clinic's own time zone", () => {
    const vladivostok = { ...clinic, timezone: "Asia/Vladivostok" }; // UTC+10
    expect(deskAt(vladivostok, new Date("2026-12-07T01:00:00Z")).open).toBe(true); // 11:00 there
    expect(deskAt(clinic, new Date("2026-12-07T01:00:00Z")).open).toBe(false); // 04:00 in Moscow
  });

  it("by default the desk never closes (the promise as before); a closed week promises working hours", () => {
    expect(deskAt(DEFAULT_DESK, msk("2026-12-07T03:00:00"))).toMatchObject({
      open: true,
      promise: "в течение ближайшего часа",
    });
    const closed = {
      ...clinic,
      hours: { ...clinic.hours, mon: null, tue: null, wed: null, thu: null, fri: null, sat: null },
    };
    expect(deskAt(closed, msk("2026-12-07T12:00:00"))).toMatchObject({
      open: false,
      promise: "в рабочее время клиники",
    });
  });

  it("an escalation reply out of hours promises the opening instead of the hour; within hours it is kept", () => {
    const night = deskAt(clinic, msk("2026-12-07T03:00:00"));
    expect(keepPromise("Передаю администратору, с вами свяжутся в течение ближайшего часа.", night)).toBe(
      "Передаю администратору, с вами свяжутся в рабочее время — сегодня с 09:00.",
    );
    expect(keepPromise("Передаю администратору.", night)).toBe(
      "Передаю администратору.\n\nСейчас клиника закрыта: администратор ответит в рабочее время — сегодня с 09:00.",
    );
    const day = deskAt(clinic, msk("2026-12-07T12:00:00"));
    expect(keepPromise("Ответим в течение ближайшего часа.", day)).toBe("Ответим в течение ближайшего часа.");
  });

  it("refuses hours that are not hours, a close before the open, an unknown zone", () => {
    expect(DeskSettings.safeParse({ ...clinic, timezone: "Mars/Olympus" }).success).toBe(false);
    expect(
      DeskSettings.safeParse({ ...clinic, hours: { ...clinic.hours, mon: { open: "20:00", close: "09:00" } } }).success,
    ).toBe(false);
    expect(
      DeskSettings.safeParse({ ...clinic, hours: { ...clinic.hours, mon: { open: "9", close: "18:00" } } }).success,
    ).toBe(false);
  });
});

describe("a quiet bot while a human holds", () => {
  const h = { operator: "Мария", since: "2026-12-07T09:00:00.000Z", replies: 0 };
  const at = (min: number) => new Date(Date.parse(h.since) + min * 60_000).toISOString();
  const quiet = 30 * 60_000;

  it("the holding reply once (even after the operator wrote first), an acknowledgement until the operator answers, again after the silence", () => {
    expect(heldAnswer({ ...h, replies: 1, lastOperatorAt: at(1) }, { at: at(2), holdRepeatMs: quiet }).reply).toBe(
      holdingReply(h),
    );
    const first = heldAnswer(h, { at: at(1), holdRepeatMs: quiet });
    expect(first.reply).toBe(holdingReply(h));
    const second = heldAnswer(first.hold, { at: at(2), holdRepeatMs: quiet });
    expect(second.reply).toBe(HOLD_ACK);
    expect(heldAnswer(first.hold, { at: at(31), holdRepeatMs: quiet }).reply).toBe(holdingReply(h));
  });

  it("nothing while an operator is talking to the patient; the holding reply after the operator went silent", () => {
    const talking = { ...h, replies: 1, heldReplyAt: at(1), lastOperatorAt: at(5) };
    expect(heldAnswer(talking, { at: at(6), holdRepeatMs: quiet }).reply).toBe("");
    expect(heldAnswer(talking, { at: at(40), holdRepeatMs: quiet }).reply).toBe(holdingReply(h));
  });

  it("a message logged before issue 43 (no time) replays to the holding reply every time", () => {
    expect(heldAnswer({ ...h, heldReplyAt: at(1) }, {}).reply).toBe(holdingReply(h));
  });
});

describe("local time, read once a minute per zone", () => {
  it("is what the zone's clock says for any instant, in any order, across DST changes and odd offsets", () => {
    const zones = ["Europe/Moscow", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "UTC"];
    // Around the 2026 DST changes (29 March, 25 October in Europe; 8 March, 1 November in the US), and any time.
    const near = (iso: string) =>
      fc.integer({ min: -3 * 3_600_000, max: 3 * 3_600_000 }).map((d) => Date.parse(iso) + d);
    const instant = fc.oneof(
      near("2026-03-29T01:00:00Z"),
      near("2026-10-25T01:00:00Z"),
      near("2026-03-08T07:00:00Z"),
      near("2026-11-01T06:00:00Z"),
      fc.integer({ min: Date.parse("2020-01-01"), max: Date.parse("2035-01-01") }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...zones), instant), { maxLength: 40 }), (reads) => {
        for (const [tz, t] of reads) {
          // The same minute asked again, a second later, must agree as well.
          for (const at of [new Date(t), new Date(t + 1_000)]) expect(localTime(at, tz)).toEqual(readLocalTime(at, tz));
        }
      }),
      { numRuns: 300 },
    );
  });
});
