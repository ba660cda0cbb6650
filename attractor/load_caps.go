package attractor

import (
	"fmt"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// Size caps. A pipeline file comes from a pull request; under the 1 MiB
// file cap it can still name 150,000 nodes, and everything after parsing
// (checks, reports, the run page, check runs) costs in proportion. Load
// counts nodes and edges on the syntax tree, stopping at the cap, and
// refuses a graph over either before building anything from it. The
// defaults are far above hand-written or generated pipelines (tens to a
// few hundred nodes); a server may set its own (server policy
// limits.max_graph_nodes, limits.max_graph_edges).
const (
	DefaultMaxNodes = 10_000
	DefaultMaxEdges = 50_000
)

// GraphCaps are the most nodes (distinct declared IDs) and edges (hops
// of edge statements) a pipeline may have; zero means the default.
type GraphCaps struct {
	MaxNodes int
	MaxEdges int
}

// WithGraphCaps sets the caps Load enforces instead of the defaults.
func WithGraphCaps(c GraphCaps) LoadOption {
	return func(lc *loadConfig) { lc.caps = c }
}

func (c GraphCaps) withDefaults() GraphCaps {
	if c.MaxNodes <= 0 {
		c.MaxNodes = DefaultMaxNodes
	}
	if c.MaxEdges <= 0 {
		c.MaxEdges = DefaultMaxEdges
	}
	return c
}

// overCaps returns the diagnostic of a graph over a cap, or nil. It
// stops counting at the cap, so an oversized graph costs no more than one
// at the cap.
func overCaps(file string, g *dot.Graph, c GraphCaps) *Diagnostic {
	c = c.withDefaults()
	nodes := make(map[string]struct{}, min(c.MaxNodes, 1024))
	edges := 0
	var over *Diagnostic
	var walk func([]dot.Stmt) bool
	walk = func(stmts []dot.Stmt) bool {
		for _, st := range stmts {
			switch s := st.(type) {
			case *dot.NodeStmt:
				nodes[s.ID.Name] = struct{}{}
				if len(nodes) > c.MaxNodes {
					over = capDiagnostic(file, s.ID.Pos, "nodes", c.MaxNodes, "limits.max_graph_nodes")
					return false
				}
			case *dot.EdgeStmt:
				edges += len(s.Nodes) - 1
				if edges > c.MaxEdges {
					over = capDiagnostic(file, s.Nodes[0].Pos, "edges", c.MaxEdges, "limits.max_graph_edges")
					return false
				}
			case *dot.Subgraph:
				if !walk(s.Stmts) {
					return false
				}
			}
		}
		return true
	}
	walk(g.Stmts)
	return over
}

func capDiagnostic(file string, at dot.Pos, what string, limit int, setting string) *Diagnostic {
	return &Diagnostic{Rule: RuleSyntax, Severity: ruleSeverity(RuleSyntax), File: file, Line: at.Line, Col: at.Col,
		Message: fmt.Sprintf("%s has more than %d %s, the most a pipeline may have (server policy %s)", file, limit, what, setting),
		Fix:     "split the pipeline into smaller ones; a step that repeats is one node in a loop, not one node per repeat"}
}
