import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { childServerEnv } from "./backends";
import { freePort, untilHealthy } from "./procs";

/**
 * Issue 47 item 2, in real time: a webhook receiver down for 10 minutes (its port closed: every
 * attempt is a refused connection) while operators work on CONVERSATIONS conversations, with the
 * server's default retry settings (back-off 1 s doubling to a 10 min cap, jitter, 24 h horizon).
 * Half of each conversation's events are written at the start of the outage, half in its middle
 * (queued behind a head that keeps failing). Reported: attempts that failed during the outage,
 * how long after the receiver came back the last event arrived (promise: within one capped
 * back-off, ≤ 10 min), and whether every event arrived once per id, in `seq` order per
 * conversation, with no dead letter.
 *
 * `npx tsx bench/webhook-outage.ts [--down-s=600] [--conversations=10] [--backend=pglite|postgres] [--scale=1]`
 * `--scale=N` divides the outage and every WEBHOOK_* duration by N (what
 * test/reliability/webhook-outage.slow.test.ts does with N = 100). PostgreSQL: BENCH_DATABASE_URL
 * or DATABASE_URL; a scratch database is created and dropped. Takes down-s plus up to 10 min.
 */
const argv = process.argv.slice(2);
const opt = (k: string, d: string) => argv.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3) ?? d;
const SCALE = Number(opt("scale", "1"));
const DOWN_MS = (Number(opt("down-s", "600")) * 1000) / SCALE;
const CONVERSATIONS = Number(opt("conversations", "10"));
const BACKEND = opt("backend", "pglite");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stamp = () => new Date().toISOString().slice(11, 19);

interface Got {
  id: string;
  conversationId: string;
  seq: number;
  event: string;
  at: number;
}

const serverEnv = await childServerEnv(BACKEND, "info");
const env = serverEnv.env;

const hookPort = await freePort();
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const scaled = (ms: number) => String(Math.max(1, Math.round(ms / SCALE)));
const child = spawn(process.execPath, ["--import", "tsx", "main.ts"], {
  env: {
    ...env,
    PORT: String(port),
    HOST: "127.0.0.1",
    WEBHOOK_URL: `http://127.0.0.1:${hookPort}/hook`,
    WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
    WEBHOOK_BACKOFF_MS: scaled(1_000),
    WEBHOOK_BACKOFF_MAX_MS: scaled(600_000),
    WEBHOOK_RETRY_HORIZON_MS: scaled(86_400_000),
  },
  stdio: ["ignore", "pipe", "pipe"],
});
let failed = 0;
let lastFailure = "";
for (const s of [child.stdout!, child.stderr!])
  s.on("data", (d: Buffer) => {
    for (const line of String(d).split("\n"))
      if (/webhook: delivery .* failed/.test(line)) {
        failed++;
        lastFailure = /failed: ([^;"]*)/.exec(line)?.[1] ?? line;
      }
  });

let receiver: Server | null = null;
const got: Got[] = [];
try {
  await untilHealthy(url);
  const post = (path: string, body: unknown = {}) =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => {
      if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r;
    });
  const threads: string[] = [];
  for (let i = 0; i < CONVERSATIONS; i++)
    threads.push(((await (await post("/v1/clinic/threads")).json()) as { threadId: string }).threadId);

  const t0 = Date.now();
  console.log(`${stamp()} receiver down (port ${hookPort} closed) for ${DOWN_MS / 1000} s`);
  for (const [i, id] of threads.entries()) {
    await post(`/v1/inbox/conversations/${id}/take`, { operator: `Оператор ${i}` });
    await post(`/v1/inbox/conversations/${id}/messages`, { text: `Здравствуйте, ${i}` });
  }
  await sleep(DOWN_MS / 2);
  for (const [i, id] of threads.entries()) {
    await post(`/v1/inbox/conversations/${id}/messages`, { text: `Чем помочь, ${i}?` });
    await post(`/v1/inbox/conversations/${id}/close`);
  }
  const expected = CONVERSATIONS * 4;
  await sleep(Math.max(0, t0 + DOWN_MS - Date.now()));
  const failedDuringOutage = failed;

  receiver = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    const j = JSON.parse(body) as Omit<Got, "at">;
    got.push({ id: j.id, conversationId: j.conversationId, seq: j.seq, event: j.event, at: Date.now() });
    res.writeHead(200).end("ok");
  });
  await new Promise<void>((r) => receiver!.listen(hookPort, "127.0.0.1", () => r()));
  const up = Date.now();
  console.log(`${stamp()} receiver up; ${failedDuringOutage} attempts failed meanwhile (${lastFailure})`);
  const limit = up + (2 * 600_000) / SCALE;
  while (new Set(got.map((g) => g.id)).size < expected && Date.now() < limit) await sleep(100);
  await sleep(1_000);

  const ids = new Set(got.map((g) => g.id));
  const duplicates = got.length - ids.size;
  let outOfOrder = 0;
  for (const id of threads) {
    const seqs = got.filter((g) => g.conversationId === id).map((g) => g.seq);
    if (seqs.join(",") !== seqs.map((_, k) => k + 1).join(",")) outOfOrder++;
  }
  const dead = (await (await fetch(`${url}/v1/webhooks/dead-letters`)).json()) as { deadLetters: unknown[] };
  const lastAt = Math.max(...got.map((g) => g.at));
  console.log(
    [
      `${BACKEND}: receiver down ${DOWN_MS / 1000} s${SCALE !== 1 ? ` (time scale 1/${SCALE})` : ""}, ${CONVERSATIONS} conversations, ${expected} events`,
      `  attempts failed during the outage: ${failedDuringOutage} (${(failedDuringOutage / CONVERSATIONS).toFixed(1)} per conversation's head)`,
      `  delivered: ${ids.size} of ${expected} ids, ${duplicates} repeats, ${outOfOrder} conversations out of seq order, ${dead.deadLetters.length} dead letters`,
      `  receiver up → first event ${got.length ? ((Math.min(...got.map((g) => g.at)) - up) / 1000).toFixed(1) : "-"} s, → last event ${got.length ? ((lastAt - up) / 1000).toFixed(1) : "-"} s (promise: ≤ one capped back-off, ${600 / SCALE} s)`,
    ].join("\n"),
  );
  if (ids.size !== expected || outOfOrder || dead.deadLetters.length) process.exitCode = 1;
} finally {
  receiver?.close();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await serverEnv.close();
}
