import { openPostgres, openPglite } from "/work/main/bench/backends";
import { insertRun, startRun, flushRunEvents, closeRun, listRunEvents, getRun } from "/work/main/storage/runs";
import { createConversation } from "/work/main/storage/conversations";
for (const open of [openPostgres, openPglite]) {
  const b = await open();
  const sql = b.db.sql;
  const c = await createConversation(sql, "t", "test");
  for (const [name, fn] of [["sync insertRun", insertRun], ["async startRun", startRun], ["sync insertRun", insertRun], ["async startRun", startRun]] as const) {
    const t = performance.now();
    for (let i = 0; i < 100; i++) await fn(sql, { id: `${name}-${i}-${t}`, conversationId: c.id, tenantId: "t", kind: "test", owner: "o" });
    console.log(b.name, name, ((performance.now() - t) / 100).toFixed(3), "ms");
  }
  const id = `r-${Date.now()}`;
  await startRun(sql, { id, conversationId: c.id, tenantId: "t", kind: "test", owner: "o" });
  await flushRunEvents(sql, id, [{ seq: 1, event: "a", data: {} }, { seq: 2, event: "b", data: { x: 1 } }]);
  await sql.begin((tx) => closeRun(tx, id, [{ seq: 2, event: "b", data: {} }, { seq: 3, event: "done", data: {} }], { status: "completed", outcome: "answered" }));
  console.log(await listRunEvents(sql, id, 0), (await getRun(sql, id))?.status);
  const [s] = await sql`show synchronous_commit`; console.log("after:", s);
  await b.close();
}
process.exit(0);
