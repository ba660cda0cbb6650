package attractor

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// The manager loop (shape=house, type=stack.manager_loop, spec §4.11).
//
// The spec's manager supervises a child pipeline that runs elsewhere: it
// polls the child's status on a cadence, may steer it, and stops when a
// condition holds. Here the child runs inside the house node itself, in the
// same engine, worktree and run branch: every child node is executed and
// checkpointed like any node (its ID qualified as <house>/<child>, which
// names its commit trailer, its stage directory and its check), through the
// child's own exit and goal gates. Between child nodes the manager checks
// manager.stop_condition; manager.max_cycles bounds the child's node steps.
// The child shares the house's context, so what it writes reaches the
// parent as it happens; when the child fails, its writes are rolled back
// (a condition on them must not route the failure as if the child had
// done its work) and only stack.child.* says what happened. There is nothing to poll, so manager.poll_interval
// is accepted and unused; steering (manager.actions=steer) has no meaning
// for a child the engine itself runs and is refused with a warning.

// Attribute keys of the manager loop.
const (
	attrChildDotfile   = "stack.child_dotfile"
	attrChildAutostart = "stack.child_autostart"
	attrMaxCycles      = "manager.max_cycles"
	attrPollInterval   = "manager.poll_interval"
	attrStopCondition  = "manager.stop_condition"
	attrActions        = "manager.actions"
)

// managerAttrs are the manager loop attributes the spec names.
func managerAttrs() []string {
	return []string{attrChildDotfile, attrChildAutostart, attrMaxCycles, attrPollInterval, attrStopCondition, attrActions}
}

// managerActions are the actions the spec names for manager.actions.
var managerActions = []string{"observe", "steer", "wait"}

const (
	// defaultMaxCycles is the spec's default for manager.max_cycles.
	defaultMaxCycles = 1000
	// maxManagerDepth bounds how deep house nodes nest: a house whose
	// child has a house, and so on.
	maxManagerDepth = 4
)

// managerSpec is a house node's configuration.
type managerSpec struct {
	childFile string     // stack.child_dotfile, relative to the worktree
	stop      *Condition // manager.stop_condition; nil: none
	maxCycles int        // manager.max_cycles; default defaultMaxCycles
	steer     bool       // manager.actions names steer (refused)
}

// managerSpecOf reads n's manager attributes; stack.child_dotfile on the
// node wins over the graph's. Types were checked by Load; a condition
// that does not parse is an error.
func managerSpecOf(p *Pipeline, n *Node) (managerSpec, error) {
	ms := managerSpec{maxCycles: n.Attrs.intOr(attrMaxCycles, 0)}
	if ms.maxCycles <= 0 {
		ms.maxCycles = defaultMaxCycles
	}
	ms.childFile = childFileOf(p, n)
	if src := strings.TrimSpace(n.Attrs.str(attrStopCondition)); src != "" {
		c, err := ParseCondition(src)
		if err != nil {
			return ms, fmt.Errorf("%s %q does not parse: %w", attrStopCondition, src, err)
		}
		ms.stop = c
	}
	ms.steer = slices.Contains(splitList(n.Attrs.str(attrActions)), "steer")
	return ms, nil
}

// childFileOf is the node's stack.child_dotfile, else the graph's.
func childFileOf(p *Pipeline, n *Node) string {
	if v, ok := n.Attrs.Get(attrChildDotfile); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	if p != nil {
		if v, ok := p.Attrs.Get(attrChildDotfile); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cleanChildPath checks a stack.child_dotfile value: a relative,
// slash-separated path that stays inside the worktree. Symlinks are
// checked when the file is read (safefile refuses one that leads out).
func cleanChildPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%s is not set", attrChildDotfile)
	case strings.HasPrefix(p, "/"), strings.Contains(p, "\\"), len(p) > 1 && p[1] == ':':
		return "", fmt.Errorf("%s %q is not a path relative to the repository root", attrChildDotfile, p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%s %q leads out of the repository", attrChildDotfile, p)
	}
	return c, nil
}

// readChildFile reads the child pipeline's source inside workspace.
func readChildFile(workspace, file string) ([]byte, error) {
	rel, err := cleanChildPath(file)
	if err != nil {
		return nil, err
	}
	src, err := safefile.ReadIn(workspace, rel, MaxSourceBytes)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", attrChildDotfile, rel, err)
	}
	return src, nil
}
