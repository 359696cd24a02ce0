# shellcheck shell=bash
# Shared by tests/clients/run and tests/clients/browser (sourced, not run): the reseam binary, a
# models folder made of a copy of the test model, and `reseam serve` processes on free loopback
# ports that are killed when the script exits, however it exits.

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# need COMMAND WHY: fails naming the missing tool and how to get it.
need() {
  command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed: $2"
}

# The binary is built by the caller (`cargo test` builds target/debug/reseam); nothing is built here.
bin="${1:-$repo/target/debug/reseam}"
[ -x "$bin" ] || fail "no reseam binary at $bin: build it first (cargo build, or cargo test) or pass its path"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

work="$(mktemp -d "${TMPDIR:-/tmp}/reseam-clients.XXXXXX")"
server_pids=()
cleanup() {
  local rc=$?
  for pid in "${server_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${server_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] && [ -n "${KEEP_WORK:-}" ]; then
    echo "work folder kept: $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A models folder as `reseam serve --models` reads it: the es→en test model as `es-en/`. Its own
# copy, since translating writes a pack (model.reseam) next to the model.
models="$work/models"
mkdir -p "$models"
cp -r "$repo/tests/fixtures/tiny-esen" "$models/es-en"
rm -f "$models/es-en/model.reseam"

now_ms() { date +%s%3N; }

# start_server NAME [serve options]: starts `reseam serve` on a free loopback port (port 0: the
# server picks one and prints it) and waits until GET /ready is 200. Sets $server_url; the log is
# $work/server-NAME.log.
start_server() {
  local name="$1"
  shift
  local log="$work/server-$name.log" started
  started=$(now_ms)
  "$bin" serve --models "$models" --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  local pid=$!
  server_pids+=("$pid")
  server_url=""
  for _ in $(seq 1 300); do
    server_url=$(sed -n 's|^info listening on \(http://[^/ ]*\)/ .*|\1|p' "$log" | head -n 1)
    [ -n "$server_url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "reseam serve ($name) exited before listening"; }
    sleep 0.1
  done
  [ -n "$server_url" ] || { cat "$log" >&2; fail "reseam serve ($name) printed no 'listening on' line in 30 s"; }
  for _ in $(seq 1 600); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$server_url/ready")" = 200 ] && {
      echo "server $name: $server_url, ready in $(($(now_ms) - started)) ms"
      return 0
    }
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "reseam serve ($name) exited before /ready"; }
    sleep 0.1
  done
  cat "$log" >&2
  fail "reseam serve ($name): /ready was not 200 within 60 s"
}

failures=()

# same WHAT EXPECTED_FILE ACTUAL_FILE: records a failure, with the diff, unless the files are equal.
same() {
  if diff -u --label "expected ($1)" --label "actual ($1)" "$2" "$3" >"$work/diff"; then
    echo "ok   $1"
  else
    echo "FAIL $1: differs from reseam translate:" >&2
    cat "$work/diff" >&2
    failures+=("$1")
  fi
}

# problem WHAT: records a failed check (its details already printed).
problem() {
  echo "FAIL $1" >&2
  failures+=("$1")
}

finish() {
  if [ ${#failures[@]} -gt 0 ]; then
    echo "FAILED: ${#failures[@]} check(s): ${failures[*]}" >&2
    for f in "$work"/server-*.log; do
      echo "--- server log $(basename "$f")" >&2
      tail -n 30 "$f" >&2
    done
    exit 1
  fi
}
