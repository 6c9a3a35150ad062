import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { adminConnection, benchServerUrl, createScratchDatabase } from "./backends";
import { HttpClient } from "./http";
import { quietServerEnv, startLoopbackModel } from "./model";
import { spawnProc } from "./procs";
import { bytes, ms, sleep } from "./stats";
import { checkedTurn, clinicTarget, turnScript } from "./targets";

/**
 * Start-up and memory of the server as a user runs it (issue 33): for each backend (embedded
 * PGlite in a fresh DATA_DIR, a fresh PostgreSQL database) and each entry (`dist` = the esbuild
 * bundle `npm start` runs, `ts` = `node --import tsx main.ts`, `npm run start:ts`): cold start to
 * /readyz, the first clinic turn, RSS 15 s after start (idle), CPU per turn and RSS after 1,000
 * turns (16 in flight, loopback scripted model).
 *
 * `npx tsx bench/rss.ts [--entry=dist,ts] [--backend=pglite,postgres] [--turns=1000] [--idle-s=15]`
 * (`npm run build` first for `dist`).
 */
const argv = process.argv.slice(2);
const opt = (k: string, d: string) => argv.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3) ?? d;
const entries = opt("entry", "dist,ts").split(",");
const backends = opt("backend", "pglite,postgres").split(",");
const turns = Number(opt("turns", "1000"));
const idleS = Number(opt("idle-s", "15"));
const text = (i: number) => `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;
const nodeArgs: Record<string, string[]> = {
  dist: ["--enable-source-maps", "dist/main.js"],
  ts: ["--import", "tsx", "main.ts"],
};

async function main() {
  const serverUrl = benchServerUrl();
  const admin = adminConnection(serverUrl);
  const model = await startLoopbackModel(turnScript);
  const log = (l: string) => console.log(l);
  log(`start and memory: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`);
  log(
    `  ${"entry".padEnd(6)}${"backend".padEnd(10)}${"to /readyz".padStart(12)}${"1st turn".padStart(11)}${"RSS idle".padStart(11)}` +
      `${`RSS ${turns}t`.padStart(11)}${"CPU/turn".padStart(10)}${"turns/s".padStart(9)}  load`,
  );
  try {
    for (const backend of backends)
      for (const entry of entries) {
        const dataDir = mkdtempSync(join(tmpdir(), "bench-rss-"));
        const env: Record<string, string> = { ...quietServerEnv(model.baseURL), DATA_DIR: dataDir };
        const scratch = backend === "postgres" ? await createScratchDatabase(admin, serverUrl) : null;
        env.DATABASE_URL = scratch?.url ?? "";
        const proc = await spawnProc(nodeArgs[entry]!, env, "/readyz");
        const client = new HttpClient(proc.url);
        try {
          const target = clinicTarget(client);
          const first = performance.now();
          await checkedTurn(target, await target.create(), text(0));
          const firstMs = performance.now() - first;
          await sleep(Math.max(0, idleS * 1000 - (performance.now() - first)));
          const idle = proc.rss();
          const ids = await Promise.all(Array.from({ length: 16 }, () => target.create()));
          const c0 = proc.cpuMs();
          const t0 = performance.now();
          let i = 0;
          let errors = 0;
          await Promise.all(
            ids.map(async (id) => {
              while (i < turns) {
                const n = i++;
                await checkedTurn(target, id, text(n)).catch((e: Error) => {
                  if (++errors <= 3) console.error(`  ${e.message}`);
                });
              }
            }),
          );
          const elapsed = performance.now() - t0;
          const cpu = (proc.cpuMs() - c0) / turns;
          log(
            `  ${entry.padEnd(6)}${backend.padEnd(10)}${ms(proc.startMs).padStart(12)}${ms(firstMs).padStart(11)}${bytes(idle).padStart(11)}` +
              `${bytes(proc.rss()).padStart(11)}${ms(cpu).padStart(10)}${String(Math.round(turns / (elapsed / 1000))).padStart(9)}  ${loadavg()[0]!.toFixed(1)}${errors ? `  (${errors} failed)` : ""}`,
          );
        } finally {
          client.close();
          await proc.stop();
          await scratch?.drop();
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
  } finally {
    await model.close();
    await admin.end({ timeout: 2 });
  }
}

await main();
