#!/usr/bin/env bash
# Without a Docker daemon: the Dockerfile's steps on this machine, as far as they go without one.
# 1. the build context as .dockerignore leaves it; 2. `npm ci --omit=dev` from the lock file
# (the deps stage); 3. the server started as the image starts it (node --import tsx main.ts,
# HOST=0.0.0.0, an unprivileged user, only DATA_DIR writable) and probed on /readyz; 4. SIGTERM
# and a clean exit. Usage: bash scripts/docker-dry-build.sh [port]
set -euo pipefail
cd "$(dirname "$0")/.."
port="${1:-3917}"
ctx="$(mktemp -d /tmp/docker-dry-XXXXXX)"
trap 'rm -rf "$ctx"' EXIT
excludes=()
while IFS= read -r line; do
  line="${line%%#*}"; line="${line//[[:space:]]/}"
  [ -n "$line" ] && excludes+=(--exclude "/$line")
done < .dockerignore
echo "dry-build: context -> $ctx (excluding: $(grep -v '^#' .dockerignore | tr '\n' ' '))"
rsync -a "${excludes[@]}" ./ "$ctx/app/"
echo "dry-build: npm ci --omit=dev"
(cd "$ctx/app" && npm ci --omit=dev --no-audit --no-fund --silent)
du -sh "$ctx/app/node_modules" "$ctx/app" | sed 's/^/dry-build: size /'
for dev in typescript vitest vite playwright-core; do
  [ ! -e "$ctx/app/node_modules/$dev" ] || { echo "dry-build: dev dependency $dev in the image"; exit 1; }
done
mkdir -p "$ctx/data"
user=nobody
chown -R root:root "$ctx/app" && chmod -R a+rX,go-w "$ctx/app" && chmod 755 "$ctx" && chown "$user" "$ctx/data"
echo "dry-build: starting as $user on 0.0.0.0:$port"
(cd "$ctx/app" && exec setpriv --reuid="$user" --regid=nogroup --clear-groups env -i PATH="$PATH" HOME=/tmp NODE_ENV=production HOST=0.0.0.0 PORT="$port" DATA_DIR="$ctx/data" API_TOKENS=admin@dry:dry-token node --import tsx main.ts) > "$ctx/server.log" 2>&1 &
pid=$!
ok=""
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then ok=1; break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
[ -n "$ok" ] || { echo "dry-build: server did not become ready"; cat "$ctx/server.log"; kill "$pid" 2>/dev/null; exit 1; }
echo "dry-build: /readyz -> $(curl -fsS "http://127.0.0.1:$port/readyz")"
echo "dry-build: admin token, GET /v1/clinic/kb/documents -> $(curl -s -o /dev/null -w '%{http_code}' -H 'authorization: Bearer dry-token' "http://127.0.0.1:$port/v1/clinic/kb/documents")"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
echo "dry-build: exit after SIGTERM: $rc"
tail -n 3 "$ctx/server.log"
[ "$rc" -eq 0 ]
