package attractor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// findingsReadCap bounds how much of each log a verify step parses; the
// tail is kept, where compilers and test runners summarise.
const findingsReadCap = 4 << 20

// goModReadCap bounds the go.mod read for its module path.
const goModReadCap = 1 << 20

// verifyHandler runs a verify node's command without an LLM: the exit
// code decides, and the output becomes findings for annotations.
func verifyHandler(ctx context.Context, s *Stage) (Outcome, error) {
	cmd := s.Node.Command
	if cmd == "" {
		return failOutcome(ClassStructural, fmt.Sprintf(
			`verify node %s has no command: add command="…" (for example command="go vet ./...")`, s.Node.ID)), nil
	}
	res, err := s.Shell(ctx, "", cmd, s.timeout())
	if err != nil {
		return failOutcome(ClassDeterministic, fmt.Sprintf("could not start verify command: %v", err)), nil
	}
	o := Outcome{Status: StatusSuccess}
	if res.ExitCode != 0 || res.TimedOut || res.Canceled {
		o = processFailure(ctx, "verify command", s.timeout(), res)
	}
	o.Findings = s.findings("")
	o.ContextUpdates = map[string]any{
		"verify.exit_status": res.ExitCode,
		"verify.findings":    len(o.Findings),
	}
	return o, nil
}

// findings parses the stage's logs (stdout, then stderr) of the process
// whose logs carry prefix.
func (s *Stage) findings(prefix string) []findings.Finding {
	var out []byte
	for _, name := range []string{"stdout.log", "stderr.log"} {
		b, err := safefile.TailPath(filepath.Join(s.Dir, logName(prefix, name)), findingsReadCap)
		if err == nil {
			out = append(append(out, b...), '\n')
		}
	}
	return findings.Parse(out, findings.Options{Workspace: s.Workspace, NodeWorkspace: s.NodeWorkspace, GoModule: goModule(s.Workspace)})
}

// goModule returns the module path from the workspace's go.mod, which lets
// findings place go test log lines in their package directory.
func goModule(workspace string) string {
	if workspace == "" {
		return ""
	}
	// A node may have replaced go.mod with anything: a link to /dev/zero,
	// a FIFO, a huge file. Only a regular file in the workspace, capped.
	b, err := safefile.ReadIn(workspace, "go.mod", goModReadCap)
	if err != nil {
		return "" // not a Go module, or unreadable: findings still work
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
