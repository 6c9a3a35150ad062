import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseYaml } from "@redocly/openapi-core";
import { describe, expect, it } from "vitest";

/**
 * compose.yaml's scale-out profile against deploy/haproxy.cfg (no Docker daemon needed): three
 * app services built alike on the one database, HAProxy with the generated config mounted, and
 * every server of that config a service of the profile. With the compose plugin present,
 * `docker compose config` validates the file as Docker reads it.
 */
type Service = {
  build?: string;
  image?: string;
  profiles?: string[];
  environment?: Record<string, string>;
  depends_on?: unknown;
  ports?: string[];
  volumes?: string[];
};
const compose = parseYaml(readFileSync("compose.yaml", "utf8")) as { services: Record<string, Service> };
const services = compose.services;
const cfg = readFileSync("deploy/haproxy.cfg", "utf8");

describe("compose.yaml", () => {
  it("`docker compose up` is still one app on the database; the scale-out profile adds two more and HAProxy", () => {
    expect(services.app!.profiles).toBeUndefined();
    expect(services.app!.ports).toEqual(["${PORT:-3000}:3000"]);
    for (const name of ["app2", "app3"]) {
      const { profiles, ...rest } = services[name]!;
      expect(profiles).toEqual(["scale-out"]);
      const { ports: _ports, ...app } = services.app!;
      expect(rest).toEqual(app);
    }
    expect(services.app!.environment!.DATABASE_URL).toContain("@db:5432/");
    expect(services.haproxy!.profiles).toEqual(["scale-out"]);
  });

  it("HAProxy runs deploy/haproxy.cfg, whose servers are the profile's app services", () => {
    const lb = services.haproxy!;
    expect(lb.volumes).toContain("./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro");
    const servers = [...cfg.matchAll(/^\s*server \S+ ([^:\s]+):(\d+) /gm)].map((m) => [m[1], m[2]]);
    expect(servers).toEqual([
      ["app", "3000"],
      ["app2", "3000"],
      ["app3", "3000"],
    ]);
    expect(lb.depends_on).toEqual(servers.map(([host]) => host));
    const bind = /^\s*bind \S+:(\d+)$/m.exec(cfg)![1];
    expect(lb.ports).toEqual([`\${BALANCER_PORT:-8080}:${bind}`]);
    // Docker's embedded DNS re-resolves a restarted replica.
    expect(cfg).toMatch(/nameserver \S+ 127\.0\.0\.11:53/);
  });

  const composePlugin = (() => {
    try {
      execFileSync("docker", ["compose", "version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  it.runIf(composePlugin)("docker compose --profile scale-out config accepts it", () => {
    const out = execFileSync("docker", ["compose", "--profile", "scale-out", "config", "--services"], {
      env: { ...process.env, API_TOKENS: "admin@clinic:x" },
      encoding: "utf8",
    });
    expect(out.trim().split("\n").sort()).toEqual(["app", "app2", "app3", "db", "haproxy"]);
  });
});
