// Package agent runs the coding agent of a codergen (box) node: it
// implements the engine's attractor.Agent.
//
// Model. The configuration names a set of backends, each either a CLI agent
// (Claude Code, Codex, Gemini CLI, or any command template) or the API agent
// loop of this package over one provider protocol (Anthropic Messages or
// OpenAI-compatible chat completions). That set is the allowlist: for every
// node, Agent.Run picks one backend from the node's llm_provider (a backend
// name or a provider such as "anthropic"), else the default backend; checks
// the node's llm_model against the backend's allowed models; and looks up the
// provider key in the bot's environment by the variable name the
// configuration gives. A node asking for something the configuration does
// not allow, or whose key is missing, fails with class structural and a
// reason that says what is allowed or which variable to set.
//
// Environment. Every process this package starts goes through
// runner/sandbox with an environment from sandbox.NodeEnv, the recipe tool
// and verify nodes use too, so an agent finds the same toolchain as a tool
// node and never sees a bot secret. A CLI agent additionally gets an
// isolated HOME under its stage directory (toolchain locations stay pinned
// to the real HOME) and exactly one secret: its own provider key. The API
// loop holds its key in this process; its shell tool runs with precisely a
// tool node's environment and never sees any key.
//
// Status. The agent is told, in a short preamble before the prompt, to
// report its verdict by writing JSON to $KILROY_STAGE_STATUS_PATH; the
// engine applies that file over the outcome returned here and then runs the
// node's verify_command, so an agent's claim of success is never the last
// word. Without a status file, an OUTCOME:SUCCESS|PASS|FAIL marker in the
// agent's final text decides (FAIL wins). The API loop stops at max_turns
// model calls or max_tool_rounds tool rounds; stopping there without an
// explicit success fails the node with class budget_exhausted.
//
// Records. Each attempt leaves in its stage directory what the agent did:
// agent.json (backend, model, argv, exit, usage), the CLI's output
// (agent.stdout.jsonl or agent.stdout.log, agent.stderr.log), or the API
// loop's transcript.jsonl and usage.json. Token counts and cost, where
// known, also go to Outcome.Meta as tokens_in, tokens_out and cost_usd.
package agent
