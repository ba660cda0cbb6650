package attractor

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// toolOutputCap bounds tool.output in the context; the full output stays
// in stdout.log.
const toolOutputCap = 8 << 10

// toolHandler runs tool_command with bash in the workspace. Exit 0 is
// success; any other status a deterministic failure quoting the output.
func toolHandler(ctx context.Context, s *Stage) (Outcome, error) {
	cmd := s.Node.ToolCommand
	if cmd == "" {
		return failOutcome(ClassStructural, fmt.Sprintf(
			`tool node %s has no tool_command: add tool_command="…" with the shell command to run`, s.Node.ID)), nil
	}
	res, err := s.Shell(ctx, "", cmd, s.timeout())
	if err != nil {
		return failOutcome(ClassDeterministic, fmt.Sprintf("could not start tool_command: %v", err)), nil
	}
	o := Outcome{Status: StatusSuccess}
	if res.ExitCode != 0 || res.TimedOut || res.Canceled {
		o = processFailure(ctx, "tool_command", s.timeout(), res)
	}
	out := capTail(res.StdoutTail, toolOutputCap)
	o.ContextUpdates = map[string]any{
		"tool.output":      out,
		"tool.exit_status": res.ExitCode,
		// tracker's, mammoth's and Kilroy's name, trimmed so that
		// condition="context.tool_stdout=has_findings" matches `echo has_findings`.
		"tool_stdout": strings.TrimSpace(out),
	}
	return o, nil
}

// capTail keeps the last n bytes of s, starting on a rune boundary.
func capTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
