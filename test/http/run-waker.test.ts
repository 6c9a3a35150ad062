import { describe, expect, it } from "vitest";
import { RunWaker } from "../../http/run-waker";
import { RUN_EVENTS_CHANNEL } from "../../storage/runs";
import { onServer, useTestDatabase } from "../utils/db";

const t = useTestDatabase();

/** Resolves once the waker has received `n` announcements. */
async function heard(waker: RunWaker, n: number) {
  while (waker.notifications < n) await new Promise((r) => setTimeout(r, 5));
}

/** What `p` resolved to within `ms`, or "pending". */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<"pending">((r) => setTimeout(() => r("pending"), ms))]);

describe("RunWaker (issue 47: followers wait for news, never for a timer)", () => {
  it.runIf(onServer)("wakes on an announcement of its key, even one that came between arm() and wait()", async () => {
    const waker = new RunWaker(t.db);
    try {
      // The first arm opens the LISTEN connection; with nothing announced, nothing wakes it.
      const first = waker.arm("warm-up");
      expect(await within(first.wait(), 1_200)).toBe("pending");
      const armed = waker.arm("run-1");
      await t.db.sql`select pg_notify(${RUN_EVENTS_CHANNEL}, 'run-1')`;
      await heard(waker, 1);
      expect(await armed.wait()).toBe("announced");
      // Another key's news does not wake this one, nor does time.
      const other = waker.arm("run-2");
      await t.db.sql`select pg_notify(${RUN_EVENTS_CHANNEL}, 'run-1')`;
      await heard(waker, 2);
      expect(await within(other.wait(), 1_000)).toBe("pending");
      // LISTEN's connection lost and re-established: every waiter reads again (a notification may be lost).
      await t.db.sql`select pg_terminate_backend(pid) from pg_stat_activity
                      where datname = current_database() and query ilike 'listen%' and pid <> pg_backend_pid()`;
      expect(await within(other.wait(), 10_000)).toBe("reconnected");
    } finally {
      await waker.close();
    }
  });

  it("a poke from this process wakes its key's waiters; an abort ends a wait; nothing else does", async () => {
    const waker = new RunWaker(t.db);
    const a = waker.arm("thread:1");
    const b = waker.arm("thread:2");
    const waitA = a.wait();
    expect(await within(waitA, 500)).toBe("pending");
    waker.poke("thread:1");
    expect(await waitA).toBe("announced");
    const stop = new AbortController();
    const waitB = b.wait(stop.signal);
    expect(await within(waitB, 300)).toBe("pending");
    expect(waker.waiting).toBe(1);
    stop.abort();
    expect(await waitB).toBe("aborted");
    expect(waker.waiting).toBe(0);
    await waker.close();
  });
});
