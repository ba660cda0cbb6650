package agent

import (
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// preamble explains the stage status contract to the agent. It is short on
// purpose: the node's prompt is the task, this is only how to report. The
// paths it names are where the agent's processes see them (in jail).
func preamble(req attractor.AgentRequest, jail *sandbox.Jail, apiTools bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are one step (node %q) of an automated pipeline, working in the git worktree %s.\n", req.Node.ID, jail.Path(req.Workspace))
	b.WriteString("When you are done, report your result by writing one JSON object to the file named by the " +
		"environment variable KILROY_STAGE_STATUS_PATH")
	if p := req.StageEnv[attractor.EnvStatusPath]; p != "" {
		fmt.Fprintf(&b, " (%s)", jail.Path(p))
	}
	b.WriteString(":\n  {\"status\":\"success\"}\nor\n  {\"status\":\"fail\",\"failure_reason\":\"<one line: why>\"}\n" +
		"Use \"retry\" instead of \"fail\" when trying again could succeed. If you cannot write that file, write the same " +
		"JSON to " + attractor.StatusFallbackName + " at the root of the worktree.\n")
	if apiTools {
		b.WriteString("Write the file with the shell tool (for example: printf '%s' '{\"status\":\"success\"}' > \"$KILROY_STAGE_STATUS_PATH\"). ")
	}
	b.WriteString("Otherwise end your final message with OUTCOME:SUCCESS or OUTCOME:FAIL. " +
		"Your work is checked independently afterwards; report failure honestly.\n\n---\n\n")
	return b.String()
}
