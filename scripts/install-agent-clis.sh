#!/usr/bin/env bash
# Installs pinned versions of the three coding-agent CLIs the bot drives
# (Claude Code, Codex CLI, Gemini CLI) from the npm registry into a cache
# directory, for the e2e tests of runner/agent (which look for them in
# $KILROY_AGENT_CLIS, default ~/.cache/kilroy-bot/agent-clis). Prints the
# directory whose node_modules/.bin holds the programs. Idempotent: a
# directory that already holds these versions is left alone.
#
# The directory is also the bot's agent runtime (agents.runtime; found by
# itself for `kilroy-bot run`): a CLI node whose image lacks the CLI runs
# it from there, so it gets bin/node, a copy of this host's node (the bot
# makes it run in any glibc-based image). It holds no credentials.
#
# Usage: scripts/install-agent-clis.sh [DIR]
set -euo pipefail
dir="${1:-${KILROY_AGENT_CLIS:-${XDG_CACHE_HOME:-$HOME/.cache}/kilroy-bot/agent-clis}}"
pins=(
  "@anthropic-ai/claude-code@2.1.331"
  "@openai/codex@0.169.0"
  "@google/gemini-cli@0.61.0"
)
command -v npm >/dev/null || { echo "install-agent-clis: npm is not installed" >&2; exit 1; }
node="$(command -v node)" || { echo "install-agent-clis: node is not installed" >&2; exit 1; }
node="$(readlink -f "$node")"
# runtime_node copies this host's node to bin/node when it differs.
runtime_node() {
  mkdir -p "$dir/bin"
  if ! cmp -s "$node" "$dir/bin/node"; then
    cp "$node" "$dir/bin/node.tmp"
    chmod 755 "$dir/bin/node.tmp"
    mv "$dir/bin/node.tmp" "$dir/bin/node"
  fi
}
stamp="$dir/.pins"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${pins[*]}" ] && [ -x "$dir/node_modules/.bin/claude" ]; then
  runtime_node
  echo "$dir"
  exit 0
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "${pins[@]}" >&2
runtime_node
printf '%s' "${pins[*]}" > "$stamp"
echo "$dir"
