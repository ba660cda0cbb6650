package runner

import (
	"fmt"
	"regexp"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// notFound finds the command bash could not find in its own message:
// "bash: line 1: go: command not found", or for a path, "bash: line 1:
// /usr/local/go/bin/go: No such file or directory".
var notFound = regexp.MustCompile(`(?m)^(?:\S*bash: )?(?:line \d+: )?([^:\n]+): (?:command not found|No such file or directory)\s*$`)

// missingCommand explains an exit status 127 (the shell's "command not
// found") of a process in an image jail as the environment's problem,
// naming the image and what to change; "" for anything else.
func missingCommand(sb *sandbox.Sandbox, exitCode int, stderrTail string) string {
	im := sb.Image()
	if im == nil || exitCode != 127 {
		return ""
	}
	m := notFound.FindAllStringSubmatch(stderrTail, -1)
	if m == nil {
		return ""
	}
	name := m[len(m)-1][1]
	return fmt.Sprintf("Environment problem, not the change's: `%s` is not in image `%s`; %s", name, im.Name, sandbox.ImageFix)
}
