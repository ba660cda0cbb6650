package attractor

import (
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// Retry backoff defaults when neither node nor graph sets
// retry.backoff.*: start at 1s, double each attempt, cap at 60s, and
// randomise up to 20% of each delay.
const (
	defaultBackoffInitial = time.Second
	defaultBackoffFactor  = 2.0
	defaultBackoffMax     = 60 * time.Second
	defaultBackoffJitter  = 0.2

	defaultFailureSignatureLimit = 3
	defaultMaxParallel           = 4
)

func (b *builder) resolveGraph() {
	p, a := b.p, b.p.Attrs
	p.Goal = a.str("goal")
	p.Label = a.str("label")
	p.DefaultMaxRetries = a.intOr("default_max_retries", a.intOr("default_max_retry", 0))
	p.RetryTarget = a.str("retry_target")
	p.FallbackRetryTarget = a.str("fallback_retry_target")
	p.FailureSignatureLimit = a.intOr("failure_signature_limit", defaultFailureSignatureLimit)
	p.MaxNodeVisits = a.intOr("max_node_visits", 0)
	p.MaxNodeVisitsAttr = b.written(a, "max_node_visits")
	p.DefaultFidelity = a.str("default_fidelity")
	p.Retry = backoff(a, Backoff{defaultBackoffInitial, defaultBackoffFactor, defaultBackoffMax, defaultBackoffJitter})
	b.stylesheet()
}

// backoff reads retry.backoff.* from a, defaulting each part to def.
func backoff(a Attrs, def Backoff) Backoff {
	return Backoff{
		Initial: a.durOr("retry.backoff.initial", def.Initial),
		Factor:  a.floatOr("retry.backoff.factor", def.Factor),
		Max:     a.durOr("retry.backoff.max", def.Max),
		Jitter:  a.floatOr("retry.backoff.jitter", def.Jitter),
	}
}

func (b *builder) resolveNodes() {
	for _, n := range b.p.Nodes {
		a := n.Attrs
		n.Shape = a.str("shape")
		if n.Shape == "" {
			n.Shape = b.scriptShape(n)
		}
		n.Type = a.str("type")
		n.Kind = nodeKind(n.Shape, n.Type)
		n.Classes = mergeClasses(splitList(a.str("class")), b.derived[n])
		b.applyStyle(n)
		b.resolveNode(n)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// nodeKind is the explicit type, else the shape's kind. An unknown shape
// runs as an agent step (spec §4.2), which shape_agent warns about; a
// shape another engine defines selects no handler (dialect_foreign).
func nodeKind(shape, typ string) Kind {
	if typ != "" {
		return Kind(typ)
	}
	if k, ok := shapeKind(shape); ok {
		return k
	}
	if foreignShape(shape) != nil {
		return ""
	}
	return KindCodergen
}

func mergeClasses(explicit, derived []string) []string {
	out := explicit
	for _, c := range derived {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// applyStyle fills llm_model, llm_provider and reasoning_effort the node
// does not set itself (explicitly or through node defaults) from the best
// matching stylesheet rule, else from the graph attribute.
func (b *builder) applyStyle(n *Node) {
	for _, prop := range styleProperties() {
		if n.Attrs.has(prop) {
			continue
		}
		if d, ok := bestDecl(b.p.Stylesheet, n, prop); ok {
			v := dot.Value{Kind: dot.StringValue, Text: d.Value, Raw: d.Value, Pos: d.Pos}
			n.Attrs[prop] = Attr{Key: prop, Value: v, Source: FromStylesheet, Pos: d.Pos}
		} else if g, ok := b.p.Attrs[prop]; ok {
			n.Attrs[prop] = g
		}
	}
}

// bestDecl returns the declaration of prop from the matching rule with
// the highest specificity, the later rule winning ties.
func bestDecl(rules []StyleRule, n *Node, prop string) (StyleDecl, bool) {
	var best StyleDecl
	bestSpec, found := -1, false
	for _, r := range rules {
		if r.Specificity < bestSpec || !r.matches(n) {
			continue
		}
		for _, d := range r.Decls {
			if d.Property == prop {
				best, bestSpec, found = d, r.Specificity, true
			}
		}
	}
	return best, found
}

func (b *builder) resolveNode(n *Node) {
	a, p := n.Attrs, b.p
	n.Label = cmpOr(a.str("label"), n.ID)
	prompt := a.str("prompt")
	if prompt == "" && n.Kind == KindCodergen {
		prompt = n.Label
	}
	n.Prompt = strings.ReplaceAll(prompt, "$goal", p.Goal)
	n.MaxRetries = a.intOr("max_retries", p.DefaultMaxRetries)
	n.GoalGate = a.boolOr("goal_gate", false)
	n.RetryTarget = a.str("retry_target")
	n.FallbackRetryTarget = a.str("fallback_retry_target")
	n.Timeout = a.durOr("timeout", 0)
	n.AllowPartial = a.boolOr("allow_partial", false)
	n.AutoStatus = a.boolOr("auto_status", false)
	n.MaxVisits = a.intOr("max_node_visits", 0)
	n.MaxVisitsAttr = b.written(a, "max_node_visits")
	n.Retry = backoff(a, p.Retry)
	n.ToolCommand = a.str("tool_command")
	if n.Kind == KindVerify {
		n.Command = cmpOr(a.str("command"), a.str("verify_command"))
	} else {
		n.VerifyCommand = a.str("verify_command")
	}
	n.LLMModel = a.str("llm_model")
	n.LLMProvider = a.str("llm_provider")
	n.ReasoningEffort = a.str("reasoning_effort")
	n.JoinPolicy = a.str("join_policy")
	if n.Kind == KindParallel || n.Kind == KindFanIn {
		n.MaxParallel = a.intOr("max_parallel", defaultMaxParallel)
	}
	n.Fidelity = a.str("fidelity")
	n.ThreadID = a.str("thread_id")
}

// written returns the spelling key was written in where it is set: ours,
// or the other engine's alias it was read from.
func (b *builder) written(a Attrs, key string) string {
	at, ok := a[key]
	if !ok {
		return ""
	}
	if w, ok := b.aliased[at.Pos]; ok {
		return w
	}
	return key
}

func (b *builder) resolveEdge(e *Edge) {
	a := e.Attrs
	e.Label = a.str("label")
	if c, ok := a["condition"]; ok {
		e.Condition = b.conds[c.Value.Pos]
	}
	e.Weight = a.floatOr("weight", 0)
	e.LoopRestart = a.boolOr("loop_restart", false)
	e.Fidelity = a.str("fidelity")
	e.ThreadID = a.str("thread_id")
}

// fallbackTerminals applies the spec's ID convention when no shape marks
// the start or exit: a node named start/Start (exit/end) whose shape was
// not written on it becomes the start (exit).
func (b *builder) fallbackTerminals() {
	b.fallback(KindStart, "start", "Start", "START")
	b.fallback(KindExit, "exit", "end", "Exit", "End", "EXIT", "END")
}

func (b *builder) fallback(k Kind, ids ...string) {
	for _, n := range b.p.Nodes {
		if n.Kind == k {
			return
		}
	}
	for _, id := range ids {
		n := b.p.byID[id]
		if n != nil && n.Type == "" && n.Attrs["shape"].Source != FromExplicit {
			n.Kind = k
			b.resolveNode(n) // a start or exit has no prompt fallback
			return
		}
	}
}
