import { createServer, connect, type Socket } from "node:net";

/**
 * A counting TCP proxy in front of PostgreSQL (the peer harness's lib/pgproxy.mjs, in TypeScript):
 * bytes pass unchanged, the wire protocol is read on the side, so a server in another process is
 * counted whatever its client library. Used only outside timed windows (it is an extra hop).
 *   client → server: 'Q' simple query, 'P' Parse, 'B' Bind, 'E' Execute (the statement text via Parse/Bind)
 *   server → client: 'C' CommandComplete (INSERT/SELECT/BEGIN/COMMIT…), 'Z' ReadyForQuery (I idle, T in a transaction)
 * A transaction is counted when 'Z' returns to idle after at least one completed command (explicit
 * BEGIN…COMMIT or one implicit statement); it wrote if a command was INSERT/UPDATE/DELETE/MERGE/COPY,
 * or a statement's text inserts, updates, deletes or merges (a CTE's write completes as SELECT); it was
 * asynchronous if a statement of it set synchronous_commit off.
 */
export interface ProxyCounts {
  connections: number;
  /** Statements sent: simple queries + Executes. */
  statements: number;
  transactions: number;
  writing: number;
  /** Writing transactions that asked for synchronous_commit off: no WAL flush awaited. */
  async: number;
  rollbacks: number;
}

const WRITE_TAGS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE", "COPY"]);
const ASYNC = /synchronous_commit['"]?\s*(?:=|to|,)?\s*['"]?(off|local)\b/i;
// A write inside a CTE completes as SELECT: the statement's text says what the tag does not.
const WRITE = /\b(insert\s+into|update\s+\w+\s+set|delete\s+from|merge\s+into)\b/i;

const zero = (): ProxyCounts => ({
  connections: 0,
  statements: 0,
  transactions: 0,
  writing: 0,
  async: 0,
  rollbacks: 0,
});

function cstr(buf: Buffer, at: number): [string, number] {
  const end = buf.indexOf(0, at);
  return [buf.toString("utf8", at, end), end + 1];
}

/** Splits a byte stream into protocol messages; the client's first message (startup, SSL request) has no type byte. */
class Framer {
  private buf: Buffer = Buffer.alloc(0);
  opaque = false;
  expectByte = false;
  constructor(
    private readonly onMessage: (type: string, body: Buffer) => void,
    public untyped: boolean,
  ) {}
  push(chunk: Buffer): void {
    if (this.opaque) return;
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (this.opaque) return;
      if (this.expectByte) {
        if (this.buf.length < 1) return;
        const b = String.fromCharCode(this.buf[0]!);
        this.buf = this.buf.subarray(1);
        this.expectByte = false;
        this.onMessage("#byte", Buffer.from(b));
        continue;
      }
      if (this.untyped) {
        if (this.buf.length < 4) return;
        const len = this.buf.readInt32BE(0);
        if (this.buf.length < len) return;
        const body = this.buf.subarray(4, len);
        this.buf = this.buf.subarray(len);
        this.onMessage("#untyped", body);
        continue;
      }
      if (this.buf.length < 5) return;
      const len = this.buf.readInt32BE(1);
      if (this.buf.length < 1 + len) return;
      const type = String.fromCharCode(this.buf[0]!);
      const body = this.buf.subarray(5, 1 + len);
      this.buf = this.buf.subarray(1 + len);
      this.onMessage(type, body);
    }
  }
}

export interface PgProxy {
  port: number;
  snapshot(): ProxyCounts;
  close(): Promise<void>;
}

export async function startPgProxy(host: string, port: number): Promise<PgProxy> {
  const counts = zero();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    counts.connections++;
    client.setNoDelay(true);
    const upstream = connect({ host, port });
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    const stmts = new Map<string, string>();
    const portals = new Map<string, string>();
    const tx = { commands: 0, writes: false, async: false, rolledBack: false };
    const sent = (text: string) => {
      counts.statements++;
      if (ASYNC.test(text)) tx.async = true;
      if (WRITE.test(text)) tx.writes = true;
    };
    const fromClient: Framer = new Framer((type, body) => {
      if (type === "#untyped") {
        const code = body.length >= 4 ? body.readInt32BE(0) : 0;
        // SSL / GSS request: one raw byte comes back; anything else is the startup message.
        if (code === 80877103 || code === 80877104) fromServer.expectByte = true;
        else fromClient.untyped = false;
        return;
      }
      if (type === "Q") sent(cstr(body, 0)[0]);
      else if (type === "P") {
        const [name, at] = cstr(body, 0);
        stmts.set(name, cstr(body, at)[0]);
      } else if (type === "B") {
        const [portal, at] = cstr(body, 0);
        portals.set(portal, stmts.get(cstr(body, at)[0]) ?? "?");
      } else if (type === "E") sent(portals.get(cstr(body, 0)[0]) ?? "?");
    }, true);
    const fromServer: Framer = new Framer((type, body) => {
      if (type === "#byte") {
        const b = body.toString();
        if (b === "S" || b === "G") fromClient.opaque = fromServer.opaque = true; // TLS: unreadable from here on
        return;
      }
      if (type === "C") {
        const tag = cstr(body, 0)[0].split(" ")[0]!;
        tx.commands++;
        if (WRITE_TAGS.has(tag)) tx.writes = true;
        if (tag === "ROLLBACK") tx.rolledBack = true;
      } else if (type === "Z" && body[0] === 0x49 /* I */ && tx.commands > 0) {
        counts.transactions++;
        if (tx.rolledBack) counts.rollbacks++;
        else if (tx.writes) {
          counts.writing++;
          if (tx.async) counts.async++;
        }
        Object.assign(tx, { commands: 0, writes: false, async: false, rolledBack: false });
      }
    }, false);
    client.on("data", (c: Buffer) => {
      fromClient.push(c);
      upstream.write(c);
    });
    upstream.on("data", (c: Buffer) => {
      fromServer.push(c);
      client.write(c);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) s.on("close", close).on("error", close);
  });
  await new Promise<void>((r, j) => server.listen(0, "127.0.0.1", r).on("error", j));
  const addr = server.address();
  return {
    port: typeof addr === "object" && addr ? addr.port : 0,
    snapshot: () => ({ ...counts }),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export function diffCounts(a: ProxyCounts, b: ProxyCounts): ProxyCounts {
  return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - a[k as keyof ProxyCounts]])) as never;
}
