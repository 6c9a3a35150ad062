/**
 * In-process wake-ups of followers, per connection pool: the embedded database has no
 * LISTEN/NOTIFY across its socket, and every writer of one pool is in this process — so a write
 * announces itself here, and every follower waiting on that pool (one server, or several sharing
 * one database in one process) wakes without polling (issue 47). Keys are run ids and thread keys.
 */
const buses = new WeakMap<object, Set<(key: string) => void>>();

export function onLocalWake(pool: object, fn: (key: string) => void): () => void {
  let set = buses.get(pool);
  if (!set) buses.set(pool, (set = new Set()));
  set.add(fn);
  return () => set!.delete(fn);
}

export function localWake(pool: object, key: string): void {
  for (const fn of [...(buses.get(pool) ?? [])]) fn(key);
}
