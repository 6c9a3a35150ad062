import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { HAPROXY_BIN } from "../../scripts/haproxy";

/**
 * HAProxy for the tests that run the balancer (scripts/haproxy.ts): Debian's package, installed
 * here when missing and the test runs as root with apt-get (as `.ci/run` installs its packages).
 * Returns null when it is there, else why it is not — a test skips with that message only then.
 */
export function ensureHaproxy(): string | null {
  if (existsSync(HAPROXY_BIN)) return null;
  const root = process.getuid?.() === 0;
  if (!root || !existsSync("/usr/bin/apt-get"))
    return `${HAPROXY_BIN} not found and cannot be installed here (apt-get install -y haproxy as root)`;
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore", env, timeout: 120_000 });
    execFileSync("apt-get", ["install", "-y", "-qq", "haproxy"], { stdio: "ignore", env, timeout: 180_000 });
  } catch (e) {
    return `${HAPROXY_BIN} not found; apt-get install haproxy failed: ${(e as Error).message}`;
  }
  return existsSync(HAPROXY_BIN) ? null : `${HAPROXY_BIN} still missing after apt-get install haproxy`;
}
