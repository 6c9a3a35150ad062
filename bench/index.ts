import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { openPglite, openPostgres, type Backend } from "./backends";
import { goalLine, type Goal } from "./goals";
import { benchPrompt } from "./prompt";
import { benchStream } from "./stream";
import { benchTurn } from "./turn";
import { benchTurnHttp } from "./turn-http";
import { benchTurnProcs } from "./turn-procs";
import { benchPaced } from "./paced";
import { benchProfile } from "./profile";
import type { Pacing } from "./model";

/**
 * `npm run bench [-- --quick] [--only=turnhttp,paced,turn,stream,resolve,prompt,inproc] [--backend=pglite,postgres]
 *  [--pacing tick|none] [--token-gap 40] [--concs 200,800] [--window-s 12]`
 * (turnhttp: the clinic turn against FLOOR-HTTP on the instant model, every part in its own process and
 * the engine started by `npm start` (bench/turn-procs.ts), the hot-path guards; inproc: the same turn with
 * server, floor, model and client in this one process (bench/turn-http.ts, the measurement before issue 46),
 * not run by default; paced: the same against a model that streams a word every --token-gap ms with
 * --concs conversations in flight; turn: against the database-only floor)
 * Every figure is printed with its floor measured in the same run; the last lines are one per goal.
 *
 * `npm run bench:profile [-- --backend=postgres] [--conc 16] [--seconds 20] [--interval-us 500]`: the engine
 * (as `npm start` runs it, with --cpu-prof) under a steady load; where a turn's CPU goes, by category.
 */
const args = process.argv.slice(2);
const quick = args.includes("--quick");
/** `--flag=a,b` or `--flag a,b`. */
const pick = (flag: string) => {
  const i = args.findIndex((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
  if (i < 0) return undefined;
  const v = args[i]!.includes("=") ? args[i]!.split("=")[1] : args[i + 1];
  return v?.split(",");
};
const only = new Set(pick("only") ?? ["turnhttp", "paced", "turn", "stream", "resolve", "prompt"]);
const paced = {
  tokenGapMs: Number(pick("token-gap")?.[0] ?? 40),
  concs: (pick("concs") ?? (quick ? ["50", "200"] : ["200", "800"])).map(Number),
  windowS: Number(pick("window-s")?.[0] ?? (quick ? 4 : 12)),
};
const backends = pick("backend") ?? ["pglite", "postgres"];
const pacing = (pick("pacing")?.[0] ?? "tick") as Pacing;
const log = (line: string) => console.log(line);

type Optional = (o: { quick: boolean; log: (l: string) => void }) => Promise<Goal[] | void>;

/** Benchmarks other parts of the project add as they land (bench/resolve.ts). */
async function optional(name: string): Promise<Optional | null> {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  if (!existsSync(file)) return null;
  const m = (await import(file)) as Record<string, unknown>;
  const fn = m[`bench${name[0]!.toUpperCase()}${name.slice(1)}`] ?? m.run ?? m.default;
  return typeof fn === "function" ? (fn as Optional) : null;
}

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    log(`  (${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const goals: Goal[] = [];
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(1))
      .join(" ");
  log(
    `bench${quick ? " --quick" : ""}: node ${process.version}, ${cpus().length} cores, load average ${load()}, ${new Date().toISOString()}`,
  );
  if (args.includes("--profile")) {
    await benchProfile({
      backend: backends.includes("postgres") ? "postgres" : "pglite",
      conc: Number(pick("conc")?.[0] ?? 16),
      seconds: Number(pick("seconds")?.[0] ?? (quick ? 5 : 20)),
      intervalUs: Number(pick("interval-us")?.[0] ?? 500),
      pacing,
      log,
    });
    return;
  }
  let prompted = false;
  for (const name of backends) {
    // The turn as users run it: separate processes, the engine by `npm start`, its own database.
    if (only.has("turnhttp")) {
      log("");
      try {
        goals.push(
          ...(await timed("turn vs FLOOR-HTTP, separate processes", () =>
            benchTurnProcs(name as "pglite" | "postgres", { quick, log, pacing }),
          )),
        );
      } catch (e) {
        log(`${name}: turn vs FLOOR-HTTP, separate processes: not available (${(e as Error).message}); skipped`);
      }
    }
    if (!["inproc", "paced", "turn", "stream", "prompt"].some((x) => only.has(x))) continue;
    let backend: Backend;
    try {
      backend = name === "pglite" ? await openPglite() : await openPostgres();
    } catch (e) {
      log(`\n${name}: not available (${(e as Error).message}); skipped`);
      continue;
    }
    try {
      if (only.has("inproc")) {
        log("");
        goals.push(
          ...(await timed("turn vs FLOOR-HTTP, one process", () => benchTurnHttp(backend, { quick, log, pacing }))),
        );
      }
      if (only.has("paced")) {
        log("");
        goals.push(...(await timed("paced", () => benchPaced(backend, { quick, log, ...paced }))));
      }
      if (only.has("turn")) {
        log("");
        goals.push(...(await timed("turn", () => benchTurn(backend, { quick, log }))));
      }
      if (only.has("stream")) {
        log("");
        goals.push(...(await timed("stream", () => benchStream(backend, { quick, log }))));
      }
      // The characters sent to the model do not depend on the database: measured once.
      if (only.has("prompt") && !prompted) {
        prompted = true;
        log("");
        goals.push(...(await benchPrompt(backend, { quick, log })));
      }
    } finally {
      await backend.close();
    }
  }
  for (const name of ["resolve"]) {
    if (!only.has(name)) continue;
    const fn = await optional(name);
    log("");
    if (!fn) {
      log(`${name}: bench/${name}.ts is not there yet; skipped`);
      continue;
    }
    goals.push(...((await timed(name, () => fn({ quick, log }))) ?? []));
  }
  log(`\ngoals (${((performance.now() - started) / 1000).toFixed(1)} s; load average now ${load()}):`);
  for (const g of goals) log(goalLine(g));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
