#!/usr/bin/env bash
# Runs the bundled example end to end: copies examples/hello into a fresh
# git repository in a temporary directory and runs its .kilroy/ci.dot with
# `kilroy-bot run`. The report goes to stdout, progress to stderr.
#
# The example's vet step finds a real bug (main.go:9:21), so the pipeline
# fails on purpose. The demo exits 0 when the run ends exactly that way and
# says so; any other outcome is a real failure and exits non-zero.
#
# KILROY_BOT=PATH uses that kilroy-bot binary instead of building one. The
# temporary directory is kept so the run branch (git -C DIR/repo log
# kilroy/run/ci/...) and the run directory can be looked at afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
finding='main.go:9:21'

cp -R "$here/examples/hello" "$work/repo"
git -C "$work/repo" init -q -b main
git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=demo -c user.email=demo@example.invalid commit -qm "hello"

bin=${KILROY_BOT:-}
if [ -z "$bin" ]; then
  echo "demo: building kilroy-bot; the first build downloads and compiles its dependencies (a few minutes, up to ten on a small machine)" >&2
  (cd "$here" && go build -o "$work/kilroy-bot" ./cmd/kilroy-bot)
  bin=$work/kilroy-bot
fi
set +e
"$bin" run --repo "$work/repo" --data-dir "$work/data" "$@" | tee "$work/report.md"
code=${PIPESTATUS[0]}
set -e
echo "demo: the example repository, its run branch and the run directory are kept in $work (remove it when done)" >&2
if [ "$code" -eq 1 ] && grep -q "$finding" "$work/report.md"; then
  echo "demo: OK: the run failed as intended, on the vet finding at $finding (a real bug in the example); exit 0" >&2
  exit 0
fi
echo "demo: FAILED: kilroy-bot run exited $code, want 1 with the vet finding at $finding in the report" >&2
if [ "$code" -eq 0 ]; then
  exit 1
fi
exit "$code"
