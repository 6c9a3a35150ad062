import { describe, expect, it } from "vitest";
import { RunWaker } from "../../http/run-waker";
import { RUN_EVENTS_CHANNEL } from "../../storage/runs";
import { onServer, useTestDatabase } from "../utils/db";

const t = useTestDatabase();

/** Resolves once the waker has received `n` announcements. */
async function heard(waker: RunWaker, n: number) {
  while (waker.notifications < n) await new Promise((r) => setTimeout(r, 5));
}

describe("RunWaker", () => {
  it.runIf(onServer)("wakes on an announcement of its run, even one that came between arm() and wait()", async () => {
    const waker = new RunWaker(t.db);
    try {
      // The first arm opens the LISTEN connection.
      expect(await waker.arm("warm-up").wait()).toBe("timeout");
      const armed = waker.arm("run-1");
      await t.db.sql`select pg_notify(${RUN_EVENTS_CHANNEL}, 'run-1')`;
      await heard(waker, 1);
      expect(await armed.wait()).toBe("announced");
      // Another run's news does not wake this one: it waits for its fallback.
      const other = waker.arm("run-2");
      await t.db.sql`select pg_notify(${RUN_EVENTS_CHANNEL}, 'run-1')`;
      expect(await other.wait()).toBe("timeout");
      expect(waker.notifications).toBe(2);
    } finally {
      await waker.close();
    }
  });

  it.runIf(!onServer)("polls on PGlite (one process; LISTEN does not cross its socket)", async () => {
    const waker = new RunWaker(t.db);
    expect(await waker.arm("run-1").wait()).toBe("timeout");
    expect(waker.notifications).toBe(0);
    await waker.close();
  });
});
