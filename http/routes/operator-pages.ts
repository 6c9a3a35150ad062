import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Hono, type Context } from "hono";
import { AppError } from "../../driver/errors";
import type { AuthEnv } from "../auth";

/**
 * The operator pages: plain HTML, CSS and ES modules from server/static, served as they are (no
 * build step). Names are matched against a strict pattern, so no path can leave the folder.
 * The pages themselves are public; the API calls they make carry the operator's token.
 */

export const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "static");

const types: Record<string, string> = {
  html: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  svg: "image/svg+xml; charset=utf-8",
  json: "application/json; charset=utf-8",
};

async function send(c: Context, rel: string): Promise<Response> {
  const ext = rel.slice(rel.lastIndexOf(".") + 1);
  let body: Buffer;
  try {
    body = await readFile(join(STATIC_DIR, rel));
  } catch {
    throw new AppError("not_found", `Нет такой страницы: ${rel}`);
  }
  return c.body(new Uint8Array(body), 200, {
    "content-type": types[ext] ?? "application/octet-stream",
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
  });
}

export function operatorPages(): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  // Seed 003 puts Отладка at the root.
  app.get("/", (c) => send(c, "debug.html"));
  // Browsers ask for /favicon.ico on every page; an SVG answers it (no binary icon in the repo).
  app.get("/favicon.ico", (c) => send(c, join("assets", "favicon.svg")));
  app.get("/:page{[a-z0-9-]+\\.html}", (c) => send(c, c.req.param("page")));
  app.get("/assets/:file{[a-z0-9-]+\\.(?:js|css|svg|json)}", (c) => send(c, join("assets", c.req.param("file"))));
  return app;
}
