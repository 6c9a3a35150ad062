import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig as load } from "../../http/config";
import { modelRoles } from "../../driver/system";
import { dialogueSystems } from "../../systems";

/**
 * Issue 47: every setting is checked at start, and a bad one stops the start with a message that
 * names it — numbers, URLs, enums, paths, per-role names, settings that must agree.
 */
const loadConfig = (env: Record<string, string | undefined>) => load(env, modelRoles(dialogueSystems));
const scratch = mkdtempSync(join(tmpdir(), "config-"));
const aFile = join(scratch, "a-file");
writeFileSync(aFile, "");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("configuration is validated at start, naming the entry", () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ PORT: "abc" }, /PORT="abc"/],
    [{ PORT: "70000" }, /PORT="70000"/],
    [{ PORT: "3000.5" }, /PORT="3000\.5"/],
    [{ HOST: "not a host!" }, /HOST="not a host!": expected a host name or an IP address/],
    [{ HTTP_KEEP_ALIVE_MS: "10" }, /HTTP_KEEP_ALIVE_MS="10"/],
    [{ DATABASE_URL: "mysql://db/app" }, /DATABASE_URL=\(hidden\): expected a postgres:\/\/ or postgresql:\/\/ URL/],
    [{ DATABASE_URL: "127.0.0.1:5432/app" }, /DATABASE_URL/],
    [{ DATABASE_POOL_MAX: "0" }, /DATABASE_POOL_MAX="0"/],
    [{ DATABASE_CONNECT_TIMEOUT_MS: "5s" }, /DATABASE_CONNECT_TIMEOUT_MS="5s"/],
    [
      { OPENAI_BASE_URL: "ftp://models/v1", LLM_MODEL: "m" },
      /OPENAI_BASE_URL="ftp:\/\/models\/v1": expected a http:\/\/ or https:\/\/ URL/,
    ],
    [{ OPENAI_BASE_URL: "api.deepseek.com/v1", LLM_MODEL: "m" }, /OPENAI_BASE_URL/],
    [{ LLM_TIMEOUT_MS: "60s" }, /LLM_TIMEOUT_MS="60s"/],
    [{ LLM_FETCH: "curl" }, /LLM_FETCH="curl"/],
    [{ AI_DEBUG: "yes" }, /AI_DEBUG="yes"/],
    [{ LOG_LEVEL: "verbose" }, /LOG_LEVEL="verbose"/],
    [{ DOCS_DIR: join(scratch, "no-such-folder") }, /DOCS_DIR=.*no such folder/],
    [{ DATA_DIR: aFile }, /DATA_DIR=.*is a file, not a folder/],
    [{ DEBUG_DIR: aFile }, /DEBUG_DIR=.*is a file, not a folder/],
    [{ BODY_LIMIT_BYTES: "-1" }, /BODY_LIMIT_BYTES="-1"/],
    [{ RUN_STALE_MS: "10" }, /RUN_STALE_MS="10"/],
    [{ COMMIT_TIMEOUT_MS: "0" }, /COMMIT_TIMEOUT_MS="0"/],
    [{ RUN_CLOSE_TIMEOUT_MS: "x" }, /RUN_CLOSE_TIMEOUT_MS="x"/],
    [{ SWEEP_TIMEOUT_MS: "1e9" }, /SWEEP_TIMEOUT_MS="1e9"/],
    [
      { SHUTDOWN_GRACE_MS: "20000", SHUTDOWN_TIMEOUT_MS: "10000" },
      /SHUTDOWN_TIMEOUT_MS=10000 must be longer than SHUTDOWN_GRACE_MS=20000/,
    ],
    [{ LLM_MODEL_ROUTR: "cheap" }, /LLM_MODEL_ROUTR: no model role ROUTR \(the roles are .*ROUTER/],
    [{ LLM_TOTAL_TIMEOUT_MS_ANSWERS: "1000" }, /LLM_TOTAL_TIMEOUT_MS_ANSWERS: no model role ANSWERS/],
    [{ LLM_MAX_REPLY_CHARS_ROUTER: "many" }, /LLM_MAX_REPLY_CHARS_ROUTER: expected a positive integer/],
  ];
  for (const [env, message] of bad)
    it(`${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")}`, () => {
      expect(() => loadConfig(env)).toThrow(message);
    });

  it("a secret is named, never echoed", () => {
    expect(() => loadConfig({ DATABASE_URL: "mysql://app:s3cr3t@db/app" })).toThrow(/DATABASE_URL=\(hidden\)/);
    expect(() => loadConfig({ DATABASE_URL: "mysql://app:s3cr3t@db/app" })).not.toThrow(/s3cr3t/);
  });

  it("valid and empty values start: an empty value is its default", () => {
    const c = loadConfig({
      PORT: "",
      HOST: "0.0.0.0",
      DATABASE_URL: "postgresql://app@db.internal:5432/app",
      OPENAI_BASE_URL: "http://127.0.0.1:11434/v1",
      LLM_MODEL: "llama3.1:8b",
      LLM_MODEL_ROUTER: "cheap",
      LOG_LEVEL: "warn",
      DATA_DIR: join(scratch, "not-yet"),
      SHUTDOWN_GRACE_MS: "1000",
      SHUTDOWN_TIMEOUT_MS: "5000",
    });
    expect(c.port).toBe(3000);
    expect(c.deadlines.shutdownMs).toBe(5000);
    expect(loadConfig({ HOST: "::1" }).host).toBe("::1");
    expect(loadConfig({ HOST: "localhost" }).host).toBe("localhost");
  });

  it("the server process stops at start with the entry named and exit code 1", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "main.ts"], {
      env: { ...process.env, DATA_DIR: "memory://", PORT: "0", LLM_FETCH: "curl" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('could not start: Invalid configuration: LLM_FETCH="curl"');
  });
});
