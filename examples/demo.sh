#!/usr/bin/env bash
# Runs the bundled example end to end: copies examples/hello into a fresh
# git repository in a temporary directory and runs its .kilroy/ci.dot with
# `kilroy-bot run`. The report goes to stdout, progress to stderr. The
# example's vet step finds a real bug, so the run fails (exit 1) on purpose.
# The temporary directory is kept so the run branch (git -C DIR/repo log
# kilroy/run/ci/...) and the run directory can be looked at afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)

cp -R "$here/examples/hello" "$work/repo"
git -C "$work/repo" init -q -b main
git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=demo -c user.email=demo@example.invalid commit -qm "hello"

cd "$here"
go build -o "$work/kilroy-bot" ./cmd/kilroy-bot
set +e
"$work/kilroy-bot" run --repo "$work/repo" --data-dir "$work/data" "$@"
code=$?
set -e
echo "kilroy-bot run exited $code; the example repository, its run branch and the run directory are kept in $work (remove it when done)" >&2
exit "$code"
