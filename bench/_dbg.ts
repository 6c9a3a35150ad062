import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { openPostgres } from "/work/main/bench/backends";
import { benchStream } from "/work/main/bench/stream";
const b = await openPostgres();
process.env.BENCH_STREAMS = "300";
await benchStream(b, { quick: true, log: console.log }); // warm
const session = new Session(); session.connect();
await session.post("Profiler.enable"); await session.post("Profiler.start");
await benchStream(b, { quick: true, log: console.log });
const { profile } = await session.post("Profiler.stop");
writeFileSync("/tmp/bench-prof/stream.cpuprofile", JSON.stringify(profile));
await b.close();
process.exit(0);
