import { openPostgres, type Backend } from "./backends";
import { loopbackLlm, startLoopbackModel } from "./model";
import { startBenchServer, turnScript, type BenchServer } from "./targets";

export interface LoopbackEngine {
  backend: Backend;
  engine: BenchServer;
}

/**
 * Runs a benchmark script's `body` against the in-process engine on a PostgreSQL scratch database,
 * the loopback model answering every role, then closes all three (also when `body` throws). The
 * process exits 0, or 1 with the error printed: the scripts are run with `npx tsx`, nothing awaits them.
 */
export function runOnLoopbackEngine(body: (rig: LoopbackEngine) => Promise<void>): void {
  const run = async () => {
    const backend = await openPostgres();
    const model = await startLoopbackModel(turnScript);
    const engine = await startBenchServer(backend.db, loopbackLlm(model.baseURL));
    try {
      await body({ backend, engine });
    } finally {
      await engine.close();
      await model.close();
      await backend.close();
    }
  };
  run().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
