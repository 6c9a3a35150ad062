import { describe, expect, it } from "vitest";
import { isStorageUnavailable, StorageDeadlineError } from "../../storage/errors";
import { beginWithin } from "../../storage/safe-begin";
import { useTestDatabase } from "../utils/db";

/** Issue 47: a wait on the database is bounded, and what its caller was told failed is not stored later. */
const t = useTestDatabase();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("bounded waits on the database", () => {
  it("a transaction past its deadline fails for its caller and rolls back when its body comes back", async () => {
    await t.db.sql`create table if not exists deadline_probe (id text primary key)`;
    const err = await beginWithin(t.db.sql, 300, "turn commit", async (tx) => {
      await tx`insert into deadline_probe (id) values ('late-tx')`;
      await tx`select pg_sleep(1)`;
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageDeadlineError);
    expect(isStorageUnavailable(err)).toBe(true);
    await sleep(1_500);
    expect(await t.db.sql`select 1 from deadline_probe where id = 'late-tx'`).toHaveLength(0);
  });

  it("connection failures, a full disk and resource errors are storage unavailability; a bad value is not", () => {
    expect(isStorageUnavailable(Object.assign(new Error("x"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isStorageUnavailable(Object.assign(new Error("x"), { code: "CONNECTION_CLOSED" }))).toBe(true);
    expect(isStorageUnavailable(Object.assign(new Error('could not extend file "base/5/1"'), { code: "53100" }))).toBe(
      true,
    );
    expect(isStorageUnavailable(Object.assign(new Error("x"), { code: "57P01" }))).toBe(true);
    expect(isStorageUnavailable(Object.assign(new Error("x"), { code: "58030" }))).toBe(true);
    expect(isStorageUnavailable(Object.assign(new Error("x"), { code: "22P02" }))).toBe(false);
    expect(isStorageUnavailable(Object.assign(new Error("x"), { code: "23505" }))).toBe(false);
    expect(isStorageUnavailable(new Error("boom"))).toBe(false);
  });
});
