import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Slow reliability tests (real processes, kill -9, restarts) run with `npm run test:reliability`.
    exclude: ["**/node_modules/**", "test/**/*.slow.test.ts"],
    // Each file shares one database; PGlite takes seconds to boot, so give hooks room.
    hookTimeout: 60_000,
    testTimeout: 30_000,
    // expect.poll waits for a page or a background worker; 1 s (vitest's default) is too short
    // when CI runs the suite on two loaded cores. The test's own timeout still bounds it.
    expect: { poll: { timeout: 10_000 } },
    pool: "forks",
    // Two cores: more workers only contend for them and for the one PostgreSQL server.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
