import { defineConfig } from "vitest/config";

/** `npm run test:reliability`: the reliability suite, slow parts included (real server processes). */
export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    hookTimeout: 120_000,
    testTimeout: 300_000,
    pool: "forks",
    // One file at a time: they spawn server processes and kill them.
    maxWorkers: 1,
    fileParallelism: false,
  },
});
