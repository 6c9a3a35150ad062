import { createApp } from "/work/main/server/app";
import { loadConfig } from "/work/main/server/config";
const app = createApp({ db: { sql: {} as any, backend: "pglite", close: async () => {} }, llm: { offline: true } as any, config: loadConfig({}), hub: {} as any, instanceId: "x", log: () => {} } as any);
for (const r of app.routes) console.log(r.method, r.path);
process.exit(0);
