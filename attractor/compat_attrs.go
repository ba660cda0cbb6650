package attractor

import (
	"fmt"
	"slices"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// attrWhere is the kind of statement an attribute is written in.
type attrWhere int

const (
	onGraph attrWhere = iota
	onNode
	onEdge
)

func (w attrWhere) String() string {
	return [...]string{"graph", "node", "edge"}[w]
}

// ourAttrs lists the attributes the engine reads, by where they apply.
// A node attribute is also accepted as a graph one when the graph value
// is a fallback (llm_model, ...), which the graph list says itself.
func ourAttrs(w attrWhere) []string {
	switch w {
	case onGraph:
		return []string{"goal", "label", "default_max_retries", "default_max_retry", "retry_target",
			"fallback_retry_target", "failure_signature_limit", "max_node_visits", "max_restarts",
			"loop_restart_persist_keys", "retry.backoff.initial", "retry.backoff.factor", "retry.backoff.max",
			"retry.backoff.jitter", "model_stylesheet", "llm_model", "llm_provider", "reasoning_effort",
			"default_fidelity"}
	case onNode:
		return []string{"shape", "type", "label", "class", "prompt", "tool_command", "command", "verify_command",
			"timeout", "max_retries", "retry.backoff.initial", "retry.backoff.factor", "retry.backoff.max",
			"retry.backoff.jitter", "allow_partial", "goal_gate", "retry_target", "fallback_retry_target",
			"max_node_visits", "auto_status", "llm_model", "llm_provider", "reasoning_effort", "join_policy",
			"max_parallel", "human.default_choice", "fidelity", "thread_id",
			"manager.max_cycles", "manager.poll_interval", "manager.stop_condition", "manager.actions",
			"stack.child_dotfile", "stack.child_autostart"}
	}
	return []string{"condition", "label", "weight", "loop_restart", "fidelity", "thread_id"}
}

// graphvizAttrs are drawing attributes: Graphviz reads them, the engine
// ignores them, and nobody should be told about it.
func graphvizAttrs() []string {
	return []string{"color", "fillcolor", "fontcolor", "fontname", "fontsize", "style", "penwidth", "margin",
		"width", "height", "fixedsize", "rankdir", "rank", "ranksep", "nodesep", "splines", "compound",
		"newrank", "concentrate", "bgcolor", "labelloc", "labeljust", "labelfontsize", "labelfontname",
		"labelfontcolor", "arrowhead", "arrowtail", "arrowsize", "dir", "constraint", "headport", "tailport",
		"lhead", "ltail", "minlen", "xlabel", "taillabel", "headlabel", "tooltip", "URL", "href", "target",
		"peripheries", "sides", "skew", "distortion", "orientation", "regular", "group", "ordering", "size",
		"ratio", "pad", "dpi", "center", "layout", "id", "comment", "image", "imagescale", "gradientangle"}
}

// foreignAttr is an attribute another engine reads: an alias when ours
// names our attribute for the same thing, else ignored here.
type foreignAttr struct {
	engine string // "" when no engine is known for it
	ours   string // the attribute it is read as, "" when ignored
	note   string // what to do instead when ignored
	// onNodes: only a node attribute of that engine; on the graph the
	// name is the pipeline's own variable (mammoth writes language="Go").
	onNodes bool
}

// foreignAttrs lists other engines' attributes seen in public pipelines.
func foreignAttrs() map[string]foreignAttr {
	const kilroy, mammoth = "Kilroy", "mammoth"
	return map[string]foreignAttr{
		"llm_prompt":                   {engine: kilroy, ours: "prompt"},
		"max_visits":                   {engine: "tracker and Fabro", ours: "max_node_visits"},
		"default_choice":               {engine: mammoth, ours: "human.default_choice"},
		"context_fidelity_default":     {engine: kilroy, ours: "default_fidelity"},
		"loop_restart_signature_limit": {engine: kilroy, ours: "failure_signature_limit"},
		"node_type":                    {engine: kilroy, note: "the shape (or type=) picks the handler"},
		"is_codergen":                  {engine: kilroy, note: "shape=box makes a node an agent step"},
		"context_thread_default":       {engine: kilroy, note: "threads are not used here"},
		"max_agent_turns":              {engine: kilroy, note: "the agent backend's configuration sets turn limits"},
		"max_turns":                    {engine: mammoth, note: "the agent backend's configuration sets turn limits"},
		"max_tokens":                   {engine: kilroy, note: "the agent backend's configuration sets token limits"},
		"agent_tool":                   {engine: kilroy, note: "the repository's agent configuration picks the CLI"},
		"agent_mode":                   {engine: kilroy, note: "every box node runs the configured agent"},
		"escalation_models":            {engine: kilroy, note: "use the model stylesheet to pick models"},
		"default_command_timeout_ms":   {engine: kilroy, note: `set timeout="30s" on the tool nodes`},
		"max_command_timeout_ms":       {engine: kilroy, note: `set timeout="30s" on the tool nodes`},
		"default_node_timeout":         {engine: mammoth, note: "set timeout= on the nodes, or limits.node_timeout in .kilroy/config.yml"},
		"collect_browser_artifacts":    {engine: kilroy, note: "commit the files the step writes instead"},
		"mode":                         {engine: mammoth, note: "a hexagon node offers its outgoing edges' labels as the choices"},
		"backend":                      {engine: mammoth, note: "the repository's agent configuration picks the backend"},
		"loop_id":                      {engine: kilroy, note: "write the loop with edges"},
		"loop_max":                     {engine: kilroy, note: "bound the loop with max_node_visits"},
		"loop_until_file_contains":     {engine: kilroy, note: "end the loop with a condition edge"},
		"outputs":                      {engine: kilroy, note: "commit the files the step writes"},
		"script":                       {engine: "Fabro", ours: "tool_command"},
		"language":                     {engine: "Fabro", note: "tool_command runs in the shell; call the interpreter in it", onNodes: true},
		"selection":                    {engine: "Fabro", note: "edges are chosen by weight, then target name", onNodes: true},
		"retry_policy":                 {engine: "Fabro", note: "set max_retries and retry.backoff.* (the default here is no retries)", onNodes: true},
		"duration":                     {engine: "Fabro", note: `a wait is a tool step: tool_command="sleep 30"`, onNodes: true},
		"graph_ref":                    {engine: "allouis/attractor", note: "run a child pipeline with shape=house and stack.child_dotfile", onNodes: true},
	}
}

// attrNames indexes the attribute lists once per Load.
type attrNames struct {
	ours    [3][]string
	known   [3]map[string]bool
	foreign map[string]foreignAttr
}

func newAttrNames() *attrNames {
	an := &attrNames{foreign: foreignAttrs()}
	for _, w := range []attrWhere{onGraph, onNode, onEdge} {
		an.ours[w] = ourAttrs(w)
		an.known[w] = map[string]bool{}
		for _, k := range slices.Concat(an.ours[w], graphvizAttrs()) {
			an.known[w][k] = true
		}
	}
	// Node attributes whose graph value is a fallback, and what a graph
	// attribute statement in a subgraph sets, are fine on the graph.
	for _, k := range an.ours[onNode] {
		an.known[onGraph][k] = true
	}
	return an
}

// checkAttrKey reports an attribute that is another engine's spelling
// (attr_alias, read as ours) or that nothing reads (attr_known). Graph
// attributes the engine does not read are the pipeline's own variables
// (mirrored as context graph.KEY), so only near-misses of ours are
// suspicious there.
func (b *builder) checkAttrKey(w attrWhere, a dot.Attr) {
	if f, ok := b.names.foreign[a.Key]; ok && !(f.onNodes && w == onGraph) {
		b.foreign(w, a, f)
		return
	}
	if b.names.known[w][a.Key] {
		return
	}
	s := suggest(a.Key, b.names.ours[w])
	if s == "" && w != onEdge {
		s = suggestManagerAttr(a.Key)
	}
	if w == onGraph && s == "" {
		return
	}
	msg := fmt.Sprintf("unknown %s attribute %q: nothing reads it", w, a.Key)
	fix := fmt.Sprintf("remove %s, or see docs/pipelines.md#attributes for the %s attributes", a.Key, w)
	if s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
		fix = fmt.Sprintf("write %s=", s)
	}
	b.r.at(RuleAttrKnown, a.KeyPos, msg, fix)
}

func (b *builder) foreign(w attrWhere, a dot.Attr, f foreignAttr) {
	if f.ours != "" {
		whose := "another engine's"
		if f.engine != "" {
			whose = f.engine + "'s"
		}
		b.r.at(RuleAttrAlias, a.KeyPos, fmt.Sprintf("%s is %s name for %s; read as %s", a.Key, whose, f.ours, f.ours),
			fmt.Sprintf("write %s=", f.ours))
		return
	}
	b.r.at(RuleAttrKnown, a.KeyPos, fmt.Sprintf("%s attribute %q is %s's and ignored here", w, a.Key, f.engine),
		fmt.Sprintf("remove it: %s", f.note))
}

// canonical returns attrs with other engines' spellings renamed to ours.
// An alias written beside our own spelling in one statement is dropped:
// ours wins.
func (an *attrNames) canonical(attrs []dot.Attr) []dot.Attr {
	fa := an.foreign
	var out []dot.Attr
	for i, a := range attrs {
		f, ok := fa[a.Key]
		if !ok || f.ours == "" {
			if out != nil {
				out = append(out, a)
			}
			continue
		}
		if out == nil {
			out = append(make([]dot.Attr, 0, len(attrs)), attrs[:i]...)
		}
		if !slices.ContainsFunc(attrs, func(x dot.Attr) bool { return x.Key == f.ours }) {
			a.Key = f.ours
			out = append(out, a)
		}
	}
	if out == nil {
		return attrs
	}
	return out
}
