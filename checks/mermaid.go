package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// maxMermaid bounds the flowchart: GitHub stops rendering Mermaid sources
// past about 50 000 characters, and a graph that big says nothing the
// table does not.
const maxMermaid = 20000

// mermaidEscaper turns every character that means something to Mermaid
// (quotes, brackets, pipes, entity markers) or to the markdown around it
// (backticks, HTML) into a Mermaid entity code, so a label cannot end its
// node, open a new one or close the code block.
var mermaidEscaper = strings.NewReplacer(
	"#", "#35;", `"`, "#quot;", "&", "#amp;", "<", "#lt;", ">", "#gt;",
	"[", "#91;", "]", "#93;", "(", "#40;", ")", "#41;", "{", "#123;", "}", "#125;",
	"|", "#124;", "`", "#96;", ";", "#59;", "\r\n", " ", "\n", " ", "\r", " ", "\t", " ",
)

// mermaidLabel is a quoted, escaped Mermaid label.
func mermaidLabel(s string) string {
	return `"` + mermaidEscaper.Replace(clip(s, 200)) + `"`
}

// classDef colours nodes in state s; the class names are the states.
func classDef(s State) string {
	style := map[State]string{
		StatePending:   "fill:#f6f8fa,stroke:#8c959f,color:#57606a",
		StateRunning:   "fill:#ddf4ff,stroke:#0969da,color:#0a3069",
		StateRetrying:  "fill:#fff8c5,stroke:#bf8700,color:#7d4e00",
		StateSuccess:   "fill:#dafbe1,stroke:#1a7f37,color:#116329",
		StatePartial:   "fill:#fff8c5,stroke:#9a6700,color:#7d4e00",
		StateFailed:    "fill:#ffebe9,stroke:#cf222e,color:#a40e26",
		StateSkipped:   "fill:#f6f8fa,stroke:#d0d7de,color:#8c959f,stroke-dasharray:4 3",
		StateCancelled: "fill:#eaeef2,stroke:#6e7781,color:#424a53",
	}[s]
	return fmt.Sprintf("  classDef %s %s\n", s, firstNonEmpty(style, "fill:#ffffff"))
}

// flowchart draws the pipeline as a Mermaid flowchart: nodes shaped by
// kind and coloured by state, taken edges thick, jumps dotted. Node IDs
// are replaced by n0, n1, … because DOT IDs may hold characters Mermaid
// reads as syntax.
func flowchart(v *RunView) string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart TD\n")
	ids := make(map[string]string, len(v.Nodes))
	var used []State
	for i, n := range v.Nodes {
		if !slices.Contains(used, n.State) {
			used = append(used, n.State)
		}
		ids[n.ID] = fmt.Sprintf("n%d", i)
		fmt.Fprintf(&b, "  %s%s:::%s\n", ids[n.ID], mermaidShape(n), n.State)
	}
	for _, e := range v.Edges {
		from, ok1 := ids[e.From]
		to, ok2 := ids[e.To]
		if !ok1 || !ok2 {
			continue
		}
		fmt.Fprintf(&b, "  %s %s%s %s\n", from, mermaidArrow(e), mermaidEdgeLabel(e), to)
	}
	for _, s := range used {
		b.WriteString(classDef(s))
	}
	b.WriteString("```\n")
	return b.String()
}

// mermaidShape is a node's label in the shape of its kind.
func mermaidShape(n NodeView) string {
	l := mermaidLabel(n.Label)
	switch n.Kind {
	case attractor.KindStart, attractor.KindExit:
		return "([" + l + "])"
	case attractor.KindConditional:
		return "{" + l + "}"
	case attractor.KindVerify, attractor.KindVerifyArtifacts:
		return "{{" + l + "}}"
	case attractor.KindWaitHuman:
		return "[/" + l + "/]"
	case attractor.KindParallel, attractor.KindFanIn:
		return "[[" + l + "]]"
	}
	return "[" + l + "]"
}

// mermaidArrow is thick for edges the run took, dotted for jumps.
func mermaidArrow(e EdgeView) string {
	switch {
	case e.Jump != "":
		return "-.->"
	case e.Taken > 0:
		return "==>"
	}
	return "-->"
}

// mermaidEdgeLabel is the edge's label, else its condition, else the
// jump's rule.
func mermaidEdgeLabel(e EdgeView) string {
	l := firstNonEmpty(e.Label, e.Condition, strings.ReplaceAll(string(e.Jump), "_", " "))
	if l == "" {
		return ""
	}
	return "|" + mermaidLabel(l) + "|"
}
