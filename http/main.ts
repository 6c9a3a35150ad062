import { loadConfig, loadDotEnv } from "./config";
import { startServer } from "./start";

loadDotEnv();
const config = loadConfig();
const started = await startServer(config).catch((e: Error) => {
  console.error(`could not start: ${e.message}`);
  process.exit(1);
});
const where = started.deps.db.backend === "pglite" ? `embedded PGlite at ${config.dataDir}` : "PostgreSQL server";
console.log(`listening on ${started.url} (${where}; model: ${started.deps.llm.offline ? "offline provider" : config.llm.baseURL})`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    started.stop().then(() => process.exit(0), () => process.exit(1));
  });
}
