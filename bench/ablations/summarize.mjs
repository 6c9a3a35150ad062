// Summarizes peer-harness runs of the guarantee ablations (bench/ablations/README.md):
// per variant and round, server and PostgreSQL CPU µs per turn (sequential and 16 in flight),
// throughput at 16, WAL per turn (stats phase, this database's records), each ÷ the same round's
// floor, and each ablation's saving = ENGINE − ENGINE without that guarantee, same round.
// Usage: node summarize.mjs <run.json>...
import { readFileSync } from "node:fs";

const us = (ms, turns) => (turns ? (ms * 1000) / turns : NaN);
const rows = [];
for (const file of process.argv.slice(2)) {
  const j = JSON.parse(readFileSync(file, "utf8"));
  const byRound = new Map();
  for (const s of j.slots) {
    const c = s.conc?.["16"];
    const r = {
      v: s.variant,
      load: s.loadavg1,
      seqSrv: us(s.seq.cpu.serverMs, s.seq.cpu.turns),
      seqPg: us(s.seq.cpu.pgMs, s.seq.cpu.turns),
      c16Srv: c ? us(c.cpu.serverMs, c.cpu.turns) : NaN,
      c16Pg: c ? us(c.cpu.pgMs, c.cpu.turns) : NaN,
      tput: c?.tput ?? NaN,
    };
    if (!byRound.has(s.round)) byRound.set(s.round, {});
    byRound.get(s.round)[s.variant] = r;
  }
  const wal = {};
  for (const [v, st] of Object.entries(j.stats))
    wal[v] = st.walDb ? { b: st.walDb.bytes / st.turns, rec: st.walDb.records / st.turns } : null;
  rows.push({ file, byRound, wal });
}
const f0 = (x) => (Number.isFinite(x) ? Math.round(x).toString() : "n/a");
const fr = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "n/a");
for (const { file, byRound, wal } of rows) {
  console.log(`\n### ${file}\n`);
  console.log(
    "| round | variant | load | server µs/turn seq | @16 | PG µs/turn seq | @16 | turns/s @16 | server ÷ floor (seq/@16) | PG ÷ floor (seq/@16) | tput ÷ floor |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const [round, vs] of [...byRound].sort((a, b) => a[0] - b[0])) {
    const fl = vs.floor;
    for (const r of Object.values(vs))
      console.log(
        `| ${round + 1} | ${r.v} | ${r.load} | ${f0(r.seqSrv)} | ${f0(r.c16Srv)} | ${f0(r.seqPg)} | ${f0(r.c16Pg)} | ${f0(r.tput)} | ${fr(r.seqSrv / fl.seqSrv)} / ${fr(r.c16Srv / fl.c16Srv)} | ${fr(r.seqPg / fl.seqPg)} / ${fr(r.c16Pg / fl.c16Pg)} | ${fr(r.tput / fl.tput)} |`,
      );
  }
  console.log(
    "\n| ablation | saving server µs/turn seq (r1 / r2) | @16 | saving PG µs/turn seq | @16 | WAL B/turn (its run) | WAL saving B/turn |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  const vars = new Set([...byRound.values()].flatMap((vs) => Object.keys(vs)));
  for (const v of vars) {
    if (!v.startsWith("engine_")) continue;
    const d = (k) =>
      [...byRound.values()].map((vs) => (vs[v] && vs.engine ? f0(vs.engine[k] - vs[v][k]) : "n/a")).join(" / ");
    console.log(
      `| ${v} | ${d("seqSrv")} | ${d("c16Srv")} | ${d("seqPg")} | ${d("c16Pg")} | ${f0(wal[v]?.b)} | ${f0(wal.engine?.b - wal[v]?.b)} |`,
    );
  }
  console.log("\n| variant | WAL B/turn | records/turn | ÷ floor |\n|---|---:|---:|---:|");
  for (const [v, w] of Object.entries(wal))
    console.log(`| ${v} | ${f0(w?.b)} | ${w?.rec?.toFixed(1)} | ${fr(w?.b / wal.floor?.b)} |`);
}

// Across every round of every run given: the median same-round saving and the median ratio ÷ floor.
const med = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
const all = rows.flatMap((r) => [...r.byRound.values()]);
const vars = [...new Set(all.flatMap((vs) => Object.keys(vs)))];
console.log(`\n### Median over ${all.length} rounds\n`);
console.log(
  "| variant | server µs/turn seq | @16 | PG µs/turn seq | @16 | server ÷ floor seq / @16 | PG ÷ floor seq / @16 | tput ÷ floor | saving vs ENGINE: server seq / @16 | PG seq / @16 |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const v of vars) {
  const m = (k) => med(all.map((vs) => vs[v]?.[k]));
  const rf = (k) => med(all.map((vs) => vs[v]?.[k] / vs.floor?.[k]));
  const sv = (k) => med(all.map((vs) => vs.engine?.[k] - vs[v]?.[k]));
  console.log(
    `| ${v} | ${f0(m("seqSrv"))} | ${f0(m("c16Srv"))} | ${f0(m("seqPg"))} | ${f0(m("c16Pg"))} | ${fr(rf("seqSrv"))} / ${fr(rf("c16Srv"))} | ${fr(rf("seqPg"))} / ${fr(rf("c16Pg"))} | ${fr(rf("tput"))} | ${v.startsWith("engine_") ? `${f0(sv("seqSrv"))} / ${f0(sv("c16Srv"))} | ${f0(sv("seqPg"))} / ${f0(sv("c16Pg"))}` : "— | —"} |`,
  );
}
