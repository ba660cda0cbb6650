// Package attractor holds pipeline semantics: the typed pipeline loaded from
// DOT, its validator, and the engine that runs it.
//
// A pipeline is parsed once by package dot, then turned by Load into typed
// values (Pipeline, Node, Edge) with defaults, subgraph scopes, the model
// stylesheet and conditions resolved. Everything after Load works with these
// types and never re-reads raw attributes. Every node, edge and attribute
// keeps its source position so diagnostics and check-run annotations can
// point at the exact line.
//
// The package touches no GitHub, git, process environment or exec: the host
// hands it the ways to start processes, ask humans, call agents and
// checkpoint, and listens to what happens through a Listener.
package attractor

import (
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// Kind is a node's handler type: the explicit `type=` attribute, else the
// one derived from its shape.
type Kind string

const (
	KindStart           Kind = "start"
	KindExit            Kind = "exit"
	KindCodergen        Kind = "codergen"
	KindTool            Kind = "tool"
	KindVerify          Kind = "verify"
	KindVerifyArtifacts Kind = "verify.artifacts"
	KindConditional     Kind = "conditional"
	KindWaitHuman       Kind = "wait.human"
	KindParallel        Kind = "parallel"
	KindFanIn           Kind = "parallel.fan_in"
	KindManagerLoop     Kind = "stack.manager_loop"
)

// Pipeline is a loaded, typed pipeline.
type Pipeline struct {
	File  string // path as given to Load, used in diagnostics
	Name  string // digraph ID
	Pos   dot.Pos
	Goal  string
	Label string

	// Attrs holds every graph-level attribute after scoping, by key.
	Attrs Attrs

	Nodes []*Node // declaration order
	Edges []*Edge // declaration order, chains expanded

	Stylesheet []StyleRule

	DefaultMaxRetries     int
	RetryTarget           string
	FallbackRetryTarget   string
	FailureSignatureLimit int    // default 3
	MaxNodeVisits         int    // 0 = unlimited
	MaxNodeVisitsAttr     string // the attribute as written (max_node_visits, or max_visits); "" when unset
	Retry                 Backoff
	DefaultFidelity       string // default_fidelity; "" = unset

	byID map[string]*Node
	// out and in index Edges by node ID; Load builds them once so that
	// Outgoing and Incoming are O(degree), not O(E). Nil for pipelines
	// built by hand, which fall back to scanning.
	out, in map[string][]*Edge
}

// Node returns the node with the given ID, or nil.
func (p *Pipeline) Node(id string) *Node { return p.byID[id] }

// Outgoing returns the edges leaving id, in declaration order.
func (p *Pipeline) Outgoing(id string) []*Edge {
	if p.out != nil {
		return clip(p.out[id])
	}
	var out []*Edge
	for _, e := range p.Edges {
		if e.From == id {
			out = append(out, e)
		}
	}
	return out
}

// Incoming returns the edges entering id, in declaration order.
func (p *Pipeline) Incoming(id string) []*Edge {
	if p.in != nil {
		return clip(p.in[id])
	}
	var in []*Edge
	for _, e := range p.Edges {
		if e.To == id {
			in = append(in, e)
		}
	}
	return in
}

// Node is a typed pipeline node. Fields hold values after node defaults,
// subgraph scopes and the stylesheet have been applied; explicit
// attributes win.
type Node struct {
	ID      string
	Pos     dot.Pos // first declaration (or first mention in an edge)
	Kind    Kind
	Shape   string
	Type    string // explicit type= value, "" when derived from the shape
	Label   string // defaults to ID
	Prompt  string // $goal expanded
	Classes []string

	MaxRetries          int // resolved: node value, else graph default
	GoalGate            bool
	RetryTarget         string
	FallbackRetryTarget string
	Timeout             time.Duration // 0 = handler default
	AllowPartial        bool
	AutoStatus          bool
	MaxVisits           int    // max_node_visits on the node, 0 = graph value
	MaxVisitsAttr       string // the attribute as written (max_node_visits, or max_visits); "" when unset
	Retry               Backoff

	ToolCommand   string // tool nodes
	Command       string // verify nodes: command, else verify_command
	VerifyCommand string // re-check run after box, diamond, fan-in, exit

	LLMModel        string
	LLMProvider     string
	ReasoningEffort string

	JoinPolicy  string // parallel and fan-in: "wait_all", "first_success", or "" (the fan-in's, else wait_all)
	MaxParallel int    // parallel: max_parallel, default 4

	Fidelity string // fidelity on the node; "" = inherit (edge, then graph default_fidelity)
	ThreadID string // thread_id on the node; "" = derive

	// Attrs holds every attribute of the node after defaults, scopes and
	// stylesheet, by key, with where each value came from.
	Attrs Attrs
}

// Edge is one directed edge; chained statements become one Edge per hop.
type Edge struct {
	From, To    string
	Pos         dot.Pos // position of the target identifier in its statement
	FromPos     dot.Pos
	Label       string
	Condition   *Condition // nil when unconditional
	Weight      float64    // a number: integers in our dialect, fractions in samueljklee's and Fabro's
	LoopRestart bool
	Fidelity    string
	ThreadID    string
	Attrs       Attrs
}

// Backoff is the retry delay policy: delay = Initial * Factor^(attempt-1),
// capped at Max, with up to Jitter (0..1) of it randomised.
type Backoff struct {
	Initial time.Duration
	Factor  float64
	Max     time.Duration
	Jitter  float64
}

// AttrSource says where an attribute value came from.
type AttrSource string

const (
	FromExplicit   AttrSource = "explicit"   // written on the node/edge itself
	FromDefault    AttrSource = "default"    // node [..] / edge [..] block, possibly a subgraph's
	FromStylesheet AttrSource = "stylesheet" // model_stylesheet rule
	FromGraph      AttrSource = "graph"      // graph [..] or top-level key=value
)

// Attr is one resolved attribute.
type Attr struct {
	Key    string
	Value  dot.Value
	Source AttrSource
	Pos    dot.Pos // position of the key where it was written
}

// Attrs maps attribute keys to resolved attributes.
type Attrs map[string]Attr

// Get returns the text of key and whether it is set.
func (a Attrs) Get(key string) (string, bool) {
	v, ok := a[key]
	return v.Value.Text, ok
}

// StyleRule is one model-stylesheet rule.
type StyleRule struct {
	Selector    string // "*", "box", ".class", "#id"
	Specificity int    // 0 universal, 1 shape, 2 class, 3 id
	Decls       []StyleDecl
	Order       int     // position in the stylesheet, later wins on ties
	Offset      int     // byte offset of the selector in the stylesheet text
	Pos         dot.Pos // source position of the selector (set by Load)
}

// StyleDecl is `property: value` inside a stylesheet rule.
type StyleDecl struct {
	Property string
	Value    string
	Offset   int     // byte offset of the property in the stylesheet text
	Pos      dot.Pos // source position of the property (set by Load)
	Alias    string  // the property as written when it is another engine's name (Fabro's model), else ""
}

// Condition is a parsed edge condition: alternatives joined by ||, each
// clauses joined by && (&& binds tighter, as in Fabro). A negated clause
// (!) is stored as its complement (!outcome=success is outcome!=success).
type Condition struct {
	Source string // as written
	// Any holds the alternatives: the condition holds when every clause
	// of one of them holds. A condition without || has one.
	Any [][]Clause
	// Notes are constructs of other engines' condition languages read as
	// ours (Fabro's outcome spellings, ||, !, contains), for Load to warn.
	Notes []ConditionNote
}

// ConditionNote is a construct read as ours, at a byte offset of Source.
type ConditionNote struct {
	Offset   int
	Msg, Fix string
}

// Op is a condition operator.
type Op string

const (
	OpEq          Op = "="
	OpNe          Op = "!="
	OpTruthy      Op = ""          // bare key: true when the resolved value is non-empty and not "false"/"0"
	OpFalsy       Op = "!"         // !key: the negation of OpTruthy
	OpContains    Op = "contains"  // substring of the value, or member of a JSON array value
	OpNotContains Op = "!contains" // the negation of OpContains
)

// Clause is `key op literal`. Key is "outcome", "preferred_label" or
// "context.<path>"; Value is unquoted, and for outcome canonicalised
// (ok → success, failure → fail, skip → skipped, ...).
type Clause struct {
	Key   string
	Op    Op
	Value string
}
