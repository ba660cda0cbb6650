package attractor

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// WithRepoDir lets Load and Validate read the child pipelines that house
// nodes name (stack.child_dotfile, relative to the repository root) from
// the repository checked out at dir, and validate them too. Without it
// only what the pipeline file itself shows is checked.
func WithRepoDir(dir string) LoadOption {
	return func(c *loadConfig) { c.repoDir = dir }
}

// withManagerDepth is the nesting depth of the pipeline being loaded: 0
// for a run's own pipeline, 1 for a house's child, and so on.
func withManagerDepth(d int) LoadOption {
	return func(c *loadConfig) { c.managerDepth = d }
}

// managerLoop checks a house node: manager_child (it has a child that can
// run) and manager_loop (its settings do what they say).
func (v *validator) managerLoop(n *Node) {
	if n.Kind != KindManagerLoop || v.cfg.types[string(KindManagerLoop)] {
		return
	}
	v.managerActions(n)
	if !n.Attrs.boolOr(attrChildAutostart, true) {
		v.r.node(RuleManagerLoop, n, attrPos(n.Attrs, attrChildAutostart, n.Pos),
			fmt.Sprintf("node %q: stack.child_autostart=false is ignored: the child always starts with the house node, which runs it; there is no child started elsewhere to supervise", n.ID),
			"drop stack.child_autostart")
	}
	if src := strings.TrimSpace(n.Attrs.str(attrStopCondition)); src != "" {
		if _, err := ParseCondition(src); err != nil {
			v.r.node(RuleConditionSyntax, n, attrPos(n.Attrs, attrStopCondition, n.Pos),
				fmt.Sprintf("node %q: %s %q does not parse: %v", n.ID, attrStopCondition, src, err),
				`write a condition as on edges, e.g. manager.stop_condition="context.tests=green"`)
		}
	}
	v.managerChild(n)
}

// managerActions reports steer (refused: there is nothing to steer) and
// actions the spec does not name.
func (v *validator) managerActions(n *Node) {
	pos := attrPos(n.Attrs, attrActions, n.Pos)
	for _, a := range splitList(n.Attrs.str(attrActions)) {
		switch {
		case a == "steer":
			v.r.node(RuleManagerLoop, n, pos,
				fmt.Sprintf("node %q: manager.actions steer is refused: the child runs inside the house node, in this engine, and is never steered", n.ID),
				"drop steer; to influence the child, write context keys before the house node or from the child's own nodes")
		case !slices.Contains(managerActions, a):
			fix := "use observe, wait (steer is refused)"
			if s := suggest(a, managerActions); s != "" {
				fix = fmt.Sprintf("did you mean %q?", s)
			}
			v.r.node(RuleManagerLoop, n, pos, fmt.Sprintf("node %q: unknown manager action %q", n.ID, a), fix)
		}
	}
}

// managerChild checks the child pipeline: named, inside the repository,
// and, when the repository is at hand, readable, valid and not nested
// past maxManagerDepth. A file that does not exist yet may be written by
// an earlier node: a warning.
func (v *validator) managerChild(n *Node) {
	file := childFileOf(v.p, n)
	pos := attrPos(n.Attrs, attrChildDotfile, n.Pos)
	if _, onNode := n.Attrs[attrChildDotfile]; !onNode {
		pos = v.graphAttrPos(attrChildDotfile, n.Pos)
	}
	rel, err := cleanChildPath(file)
	if err != nil {
		v.r.node(RuleManagerChild, n, pos, fmt.Sprintf("node %q: a manager loop runs the child pipeline stack.child_dotfile names: %v", n.ID, err),
			`set stack.child_dotfile to the child's path from the repository root, e.g. stack.child_dotfile=".kilroy/child.dot"`)
		return
	}
	if v.cfg.managerDepth+1 > maxManagerDepth {
		v.r.node(RuleManagerChild, n, pos,
			fmt.Sprintf("node %q: manager loops nest %d deep here, over the limit of %d", n.ID, v.cfg.managerDepth+1, maxManagerDepth),
			"run the innermost pipeline's steps in its parent instead of through another house node")
		return
	}
	if v.cfg.repoDir == "" {
		return
	}
	src, err := safefile.ReadIn(v.cfg.repoDir, rel, MaxSourceBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v.r.node(RuleManagerLoop, n, pos,
			fmt.Sprintf("node %q: the child pipeline %s does not exist now; the run fails at this node unless an earlier node writes it", n.ID, rel),
			"commit the child pipeline, or check that a node before this one writes "+rel)
		return
	case err != nil:
		v.r.node(RuleManagerChild, n, pos, fmt.Sprintf("node %q: the child pipeline %s cannot be read: %v", n.ID, rel, err),
			"make "+rel+" a regular file inside the repository, at most 1 MiB")
		return
	}
	opts := []LoadOption{WithRepoDir(v.cfg.repoDir), withManagerDepth(v.cfg.managerDepth + 1)}
	for t := range v.cfg.types {
		opts = append(opts, WithHandlerTypes(t))
	}
	if _, ds, err := Load(rel, src, opts...); err != nil {
		errs := ds.Errors()
		msg := err.Error()
		if len(errs) > 0 {
			msg = firstDiagnostics(errs, 3)
		}
		v.r.node(RuleManagerChild, n, pos, fmt.Sprintf("node %q: the child pipeline %s does not validate: %s", n.ID, rel, msg),
			"run `kilroy-bot validate "+rel+"` and fix what it reports")
	}
}

// graphAttrPos is where the graph sets key, else fallback.
func (v *validator) graphAttrPos(key string, fallback dot.Pos) dot.Pos {
	if a, ok := v.p.Attrs[key]; ok && a.Pos.IsValid() {
		return a.Pos
	}
	return fallback
}

// suggestManagerAttr proposes a manager loop attribute for an unknown
// key of theirs (manager.* or stack.*), where suggest's bound for short
// names is too tight: "manager.stop" means manager.stop_condition.
func suggestManagerAttr(key string) string {
	prefix, _, ok := strings.Cut(key, ".")
	if !ok || (prefix != "manager" && prefix != "stack") {
		return ""
	}
	best, bestD := "", 0
	for _, c := range managerAttrs() {
		if !strings.HasPrefix(c, prefix+".") {
			continue
		}
		d := editDistance(strings.ToLower(key), c)
		if strings.HasPrefix(c, key) || strings.HasPrefix(key, c) {
			d = 0
		}
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
