import { openDatabase } from "../storage/db";
import { startFloorHttp } from "./floor-http";
import { startLoopbackModel, type Pacing } from "./model";
import { turnScript } from "./targets";

/**
 * The separate processes of the turn benchmark (bench/turn-procs.ts), each printing `ready <url>`:
 *
 *   node --import tsx bench/children.ts model [--pacing tick|none]
 *   node --import tsx bench/children.ts floor --model <baseURL> (--db <postgres url> | --pglite <dir>)
 *
 * `model`: the scripted OpenAI-compatible server (bench/model.ts) with the clinic turn's script;
 * `floor`: FLOOR-HTTP (bench/floor-http.ts) on its own database — a PostgreSQL scratch database
 * (pool of 10, as the engine's) or an embedded PGlite in a folder of its own, as `npm start` runs.
 * Both stop on SIGTERM.
 */
const [kind, ...rest] = process.argv.slice(2);
const arg = (name: string) => {
  const i = rest.indexOf(`--${name}`);
  return i >= 0 ? rest[i + 1] : undefined;
};

async function main(): Promise<void> {
  if (kind === "model") {
    const m = await startLoopbackModel(turnScript, (arg("pacing") ?? "tick") as Pacing);
    console.log(`ready ${m.baseURL}`);
    process.once("SIGTERM", () => void m.close().then(() => process.exit(0)));
    return;
  }
  if (kind === "floor") {
    const db = arg("db")
      ? await openDatabase({ url: arg("db"), max: 10, migrate: false })
      : await openDatabase({ dataDir: arg("pglite"), migrate: false });
    const f = await startFloorHttp(db.sql, arg("model") ?? "");
    console.log(`ready ${f.url}`);
    process.once("SIGTERM", () => void f.close().then(() => db.close().then(() => process.exit(0))));
    return;
  }
  throw new Error(`unknown child ${kind}: model or floor`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
