import { drive } from "../driver/drive";
import { restoreRow } from "../driver/turn";
import { clinicSpec } from "../systems/clinic/registry-load";
import { defaultRegistry } from "../systems/clinic/registry";
import type { DialogueEmitted, DialogueEvent } from "../systems/clinic/dialogue.machine";
import type { SnapshotRow } from "../storage/snapshots";
import { createTailFilter } from "../systems/clinic/service-tail";
import { branchResult } from "../systems/clinic/turn-guards";

/**
 * machine-turn: the statechart work of one clinic booking turn, in process (issue 46) — the
 * stored snapshot restored (restoreRow), the driver's loop (drive) with the router's and the
 * branch's answers scripted as the peer harness's model gives them, the persisted snapshot taken
 * and serialised once. The six-turn booking dialogue of the peer harness (intro → … → close),
 * repeated; µs per turn, with each phase apart. No I/O, so it is the steadiest measure of the
 * machine's share on a busy machine.
 *
 *   node --import tsx bench/machine-turn.ts [iterations of the dialogue, default 2000]
 */

const USER = [
  "Здравствуйте! Хочу записаться на приём, меня зовут Анна.",
  "Уже две недели болит колено, наверное, нужен ортопед.",
  "Да, ортопед подходит, давайте запишемся.",
  "Мне удобно во вторник утром, часов в девять.",
  "Да, подтверждаю запись на вторник.",
  "Спасибо, больше вопросов нет, до свидания!",
];

const SCRIPT: Record<string, { reply: string; update: object }> = {
  intro: {
    reply: "Здравствуйте, Анна! Рада помочь с записью. Расскажите, пожалуйста, что именно вас сейчас беспокоит?",
    update: { state_after: "qualify", slots_updated: { name: "Анна" }, soft_insertion: false },
  },
  qualify: {
    reply: "Понимаю, боль в колене. Вас примет ортопед, первичный приём длится около тридцати минут.",
    update: {
      state_after: "present",
      slots_updated: { reason: "боль в колене", specialist: "ортопед" },
      soft_insertion: false,
    },
  },
  present: {
    reply: "Ортопед Иванова ведёт приём по будням. Подскажите, когда вам удобно прийти на приём?",
    update: { state_after: "offer_time", slots_updated: {}, soft_insertion: false },
  },
  offer_time: {
    reply: "Есть свободное окно во вторник в девять утра. Записать вас на это время, Анна?",
    update: { state_after: "book", slots_updated: { preferred_time: "вторник 09:00" }, soft_insertion: false },
  },
  book: {
    reply: "Готово, Анна! Вы записаны к ортопеду во вторник в 09:00. Ждём вас в клинике.",
    update: { state_after: "close", slots_updated: { confirmed: true }, soft_insertion: false },
  },
  close: {
    reply: "Пожалуйста! Возьмите с собой паспорт и снимки, если они есть. Хорошего дня, до встречи!",
    update: { state_after: "close", slots_updated: {}, soft_insertion: false },
  },
};

const spec = clinicSpec("bench", { registry: defaultRegistry(), versions: "bench" });

interface Phases {
  /** Process CPU time (user + system, ms): steadier than the wall clock on a shared machine. */
  cpu: number;
  restore: number;
  drive: number;
  persist: number;
  bytes: number;
  transitions: number;
}

/** One turn as runTurn does it, minus the I/O: the stored row in, the serialised snapshot out. */
function turn(row: SnapshotRow | null, text: string, t: Phases): SnapshotRow {
  const t0 = performance.now();
  const loaded = restoreRow(spec, "thread", row);
  const t1 = performance.now();
  const walk = drive({
    machine: spec.machine,
    id: spec.id,
    snapshot: loaded?.snapshot ?? null,
    input: {},
    events: [{ type: "patient.message", text, at: "2026-12-07T10:00:00.000Z", holdRepeatMs: 1_800_000 }],
  });
  let step = walk.next([]);
  let final = false;
  while (!step.done) {
    const e = step.value as DialogueEmitted;
    let fed: DialogueEvent[] = [];
    if (e.type === "effect.router") fed = [{ type: "router.result", text: "new_booking" }];
    else if (e.type === "effect.branch") {
      const s = SCRIPT[/Шаг: ([a-z_]+)/.exec(e.system)?.[1] ?? "intro"]!;
      const text = `${s.reply}\nSTATE_JSON: ${JSON.stringify(s.update)}`;
      // As the effect handler streams it (turn-effects.ts): through the tail filter, 16 characters a delta,
      // its reading handed to the machine with the event.
      const filter = createTailFilter();
      for (let i = 0; i < text.length; i += 16) filter.push(text.slice(i, i + 16));
      filter.end();
      fed = [branchResult(text, filter.result())];
    } else if (e.type === "effect.retrieve") fed = [{ type: "retrieve.result", fragments: [] }];
    else if (e.type === "clinic.final") final = true;
    step = walk.next(fed);
  }
  if (!final) throw new Error("turn ended without final");
  const t2 = performance.now();
  // The commit serialises the persisted snapshot once (storage/turn-commit.ts).
  const json = JSON.stringify(spec.machine.getPersistedSnapshot(step.value.snapshot));
  const t3 = performance.now();
  t.restore += t1 - t0;
  t.drive += t2 - t1;
  t.persist += t3 - t2;
  t.bytes += json.length;
  t.transitions += step.value.steps;
  // What the next turn reads back: the row as postgres.js parses the jsonb column.
  return {
    snapshot: JSON.parse(json),
    machineId: spec.id,
    machineVersion: spec.version,
    rowVersion: (row?.rowVersion ?? 0) + 1,
  } as SnapshotRow;
}

function dialogue(t: Phases) {
  let row: SnapshotRow | null = null;
  for (const text of USER) row = turn(row, text, t);
}

const iterations = Number(process.argv[2] ?? 2000);
const zero = (): Phases => ({ cpu: 0, restore: 0, drive: 0, persist: 0, bytes: 0, transitions: 0 });
for (let i = 0; i < Math.min(200, iterations); i++) dialogue(zero());
const rounds: Phases[] = [];
for (let r = 0; r < 5; r++) {
  const t = zero();
  const c0 = process.cpuUsage();
  for (let i = 0; i < iterations / 5; i++) dialogue(t);
  const c = process.cpuUsage(c0);
  t.cpu = (c.user + c.system) / 1000;
  rounds.push(t);
}
const turns = (iterations / 5) * USER.length;
const per = (t: Phases) => t.cpu / turns;
const best = rounds.reduce((a, b) => (per(b) < per(a) ? b : a));
const us = (ms: number) => ((ms * 1000) / turns).toFixed(1);
console.log(
  `machine-turn: ${us(best.cpu)} µs CPU per turn (best of 5 × ${turns} turns; ` +
    `median ${us([...rounds].map((r) => r.cpu).sort((a, b) => a - b)[2]!)}) — wall in the best round: ` +
    `restore ${us(best.restore)}, drive ${us(best.drive)}, persist ${us(best.persist)}; ` +
    `${(best.transitions / turns).toFixed(1)} transitions, ${Math.round(best.bytes / turns)} snapshot bytes per turn`,
);
