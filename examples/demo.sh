#!/usr/bin/env bash
# Runs the bundled example end to end: copies examples/hello into a fresh
# git repository in a temporary directory and runs its .kilroy/ci.dot with
# `kilroy-bot run`. The terminal summary goes to stdout, progress and the
# demo's own lines (the outcome, then what to try next) to stderr; the
# full Markdown report, what a GitHub check would show, is kept in the
# run directory.
#
# The example's vet step finds a real bug (main.go:9:21), so the pipeline
# fails on purpose. The demo exits 0 when the run ends exactly that way and
# says so; any other outcome is a real failure and exits non-zero.
#
# KILROY_BOT=PATH uses that kilroy-bot binary instead of building one. The
# temporary directory is kept so the run branch and the run directory can
# be looked at afterwards; the demo prints the commands.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
finding='main.go:9:21'

cp -R "$here/examples/hello" "$work/repo"
git -C "$work/repo" init -q -b main
git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=demo -c user.email=demo@example.invalid commit -qm "hello"

# build_notice says what building will take, only when there is something
# to build: modules to download (go list fails without the network) or
# packages the build cache lacks. The command package itself always counts.
build_notice() {
  local stale n
  if ! stale=$(cd "$here" && GOPROXY=off go list -deps -f '{{if .Stale}}{{.ImportPath}}{{end}}' ./cmd/kilroy-bot 2>/dev/null); then
    stale=download
  fi
  n=$(printf '%s\n' "$stale" | grep -c . || true)
  if [ "$stale" = download ] || [ "$n" -gt 50 ]; then
    echo "demo: building kilroy-bot; the first build downloads and compiles its dependencies (a few minutes, up to ten on a small machine)" >&2
  elif [ "$n" -gt 1 ]; then
    echo "demo: building kilroy-bot ($((n - 1)) changed packages)" >&2
  fi
}

bin=${KILROY_BOT:-}
if [ -z "$bin" ]; then
  build_notice
  (cd "$here" && go build -o "$work/kilroy-bot" ./cmd/kilroy-bot)
  bin=$work/kilroy-bot
fi
set +e
"$bin" run --repo "$work/repo" --data-dir "$work/data" --run-dir "$work/run" --format text "$@"
code=$?
set -e
if [ "$code" -eq 1 ] && grep -q "$finding" "$work/run/report.md" 2>/dev/null; then
  branch=$(git -C "$work/repo" for-each-ref --format='%(refname:short)' refs/heads/kilroy/run/)
  cat >&2 <<NEXT
demo: OK: the run failed as intended, on the vet finding at $finding (a real bug in the example); exit 0

Next:
  git -C $work/repo log --stat $branch
      the run branch: one checkpoint commit per node
  less $work/run/report.md
      the full report, what the GitHub check run shows
  cd YOUR-REPOSITORY && $bin init && $bin validate
      a pipeline for your project; commit .kilroy/, then $bin run
  $bin gc
      later, in your repository: remove runs older than 14 days (their directories and run branches)
  rm -rf $work
      remove this demo
NEXT
  exit 0
fi
echo "demo: the example repository, its run branch and the run directory are kept in $work (remove it when done)" >&2
echo "demo: FAILED: kilroy-bot run exited $code, want 1 with the vet finding at $finding in the report" >&2
if [ "$code" -eq 0 ]; then
  exit 1
fi
exit "$code"
