import { runOnLoopbackEngine, type LoopbackEngine } from "./loopback-engine";
import { bytes } from "./stats";
import { checkedTurn } from "./targets";

/**
 * `npx tsx bench/wal-breakdown.ts [turns]` — where a clinic turn's WAL goes, by table / index
 * (pg_walinspect on the PostgreSQL server, scratch database): the records of `turns`
 * sequential turns on one thread after a warm-up, grouped by relation (and record type with
 * `--records`), with their full-page images.
 */
const turns = Number(process.argv[2] ?? 50);
/** `--records`: one line per relation and WAL record type (INSERT, HOT_UPDATE, LOCK, …) instead of per relation. */
const byRecord = process.argv.includes("--records");
/**
 * `--threads=N`: the turns go round-robin over N threads, each warmed up before the checkpoint —
 * a steady state in which the first change of a page after a checkpoint writes its full image
 * (what a long run under load pays), unlike one thread whose pages stay the same few.
 */
const threads = Number(process.argv.find((a) => a.startsWith("--threads="))?.slice(10) ?? 1);

async function main({ backend, engine }: LoopbackEngine): Promise<void> {
  const sql = backend.db.sql;
  const ids: string[] = [];
  for (let t = 0; t < threads; t++) ids.push(await engine.target.create());
  for (let i = 0; i < Math.max(2, Math.ceil(10 / threads)); i++)
    for (const id of ids) await checkedTurn(engine.target, id, `разогрев ${i}`);
  await sql`checkpoint`.catch(() => {}); // full-page images after a checkpoint are not the turn's own cost
  const from = (await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`)[0]!.lsn;
  for (let i = 0; i < turns; i++) await checkedTurn(engine.target, ids[i % threads]!, `Сколько стоит приём? ${i}`);
  // The run row commits asynchronously: wait until the WAL writer flushed it (pg_walinspect reads flushed WAL only).
  const to = (await sql<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`)[0]!.lsn;
  for (
    let i = 0;
    i < 50 && !(await sql<{ ok: boolean }[]>`select pg_current_wal_flush_lsn() >= ${to}::pg_lsn as ok`)[0]!.ok;
    i++
  )
    await new Promise((r) => setTimeout(r, 100));
  const oid = (
    await sql<{ oid: number }[]>`select oid::int as oid from pg_database where datname = current_database()`
  )[0]!.oid;
  const rows = await sql<{ what: string; records: number; bytes: number; fpi: number }[]>`
      with r as (select xid, resource_manager, record_type, record_length, fpi_length, block_ref from pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)),
           mine as (select distinct xid from r where xid::text <> '0' and block_ref like ${`%/${oid}/%`}),
           keyed as (select r.*, substring(block_ref from ${`rel \\d+/${oid}/(\\d+)`})::oid as node from r
                     where block_ref like ${`%/${oid}/%`} or xid in (select xid from mine))
      select ${byRecord ? sql`coalesce(c.relname, k.resource_manager) || ' ' || k.record_type` : sql`coalesce(c.relname, k.resource_manager || ' ' || split_part(k.record_type, ' ', 1))`} as what,
             count(*)::int as records, sum(k.record_length)::int as bytes, sum(k.fpi_length)::int as fpi
      from keyed k left join pg_class c on c.relfilenode = k.node
      group by 1 order by 3 desc`;
  const total = rows.reduce((a, r) => a + r.bytes, 0);
  const fpi = rows.reduce((a, r) => a + r.fpi, 0);
  // Full-page images depend on where the checkpoint fell; the rest is what a turn writes.
  console.log(
    `WAL of ${turns} clinic turns (loopback model), per turn: ${bytes(total / turns)} (${bytes((total - fpi) / turns)} without full-page images)`,
  );
  console.log(
    `  ${"relation / record".padEnd(40)} ${"records".padStart(8)} ${"bytes".padStart(10)} ${"of which FPI".padStart(12)}`,
  );
  for (const r of rows)
    console.log(
      `  ${r.what.padEnd(40)} ${(r.records / turns).toFixed(1).padStart(8)} ${bytes(r.bytes / turns).padStart(10)} ${bytes(r.fpi / turns).padStart(12)}`,
    );
}

runOnLoopbackEngine(main);
