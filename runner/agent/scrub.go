package agent

import (
	"context"

	"github.com/kilroy-bot/kilroy-bot/secrets"
)

// scrubStage rewrites every file under the stage directory that holds a
// form of a secret the agent knows, each form replaced by [REDACTED]: a
// CLI echoes its key in its stream (a tool result showing a file it
// wrote), in session files under its isolated HOME, in Codex's shell
// snapshots. The stage directory is kept with the run and shown on its
// page, so it must never keep one. A file that cannot be rewritten is
// removed. (The runner scrubs the stage directory again once the engine
// has written its own files there, for the secrets it knows.)
func (a *Agent) scrubStage(ctx context.Context, dir string) {
	if err := secrets.ScrubTree(dir, a.secret); err != nil {
		a.log.ErrorContext(ctx, "the stage directory could not be scrubbed of secrets", "dir", dir, "err", err)
	}
}
