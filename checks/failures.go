package checks

import (
	"strings"
)

// textOverhead is what a node's section spends around its output tail
// (heading, reason, fences); the rest of its share of MaxOutput goes to
// the tail.
const textOverhead = 2048

// failureText is the summary check's text: for every failed node its
// reason and the tail of its output, each tail cut to its share of the
// limit and linked to the node's full log. Empty when nothing failed.
func failureText(v *RunView, opts RenderOptions) string {
	var failed []*NodeView
	for i := range v.Nodes {
		if v.Nodes[i].State == StateFailed {
			failed = append(failed, &v.Nodes[i])
		}
	}
	if len(failed) == 0 {
		if v.Status == RunFailed && v.Reason != "" {
			return "### Why the run failed\n\n" + codeBlock(Truncate(v.Reason, MaxOutput/2, opts.RunURL))
		}
		return ""
	}
	share := max(MaxOutput/len(failed)-textOverhead, 512)
	var b strings.Builder
	for _, n := range failed {
		b.WriteString(nodeFailure(n, opts, share))
	}
	return b.String()
}

// nodeFailure is one failed node's section: its reason and output tail,
// together within budget bytes.
func nodeFailure(n *NodeView, opts RenderOptions, budget int) string {
	var b strings.Builder
	b.WriteString("### " + stateSymbol(n.State) + " " + code(n.ID))
	if c := failureClass(n.Outcome); c != "" {
		b.WriteString(" (" + string(c) + ")")
	}
	b.WriteString("\n\n")
	url := opts.logURL(n.ID)
	if r := n.Outcome.FailureReason; r != "" {
		b.WriteString(codeBlock(Truncate(r, budget/4, url)) + "\n")
	}
	if tail := strings.TrimSpace(opts.outputTail(n)); tail != "" {
		b.WriteString("Output (tail)")
		if url != "" {
			b.WriteString(", " + link("full log", url))
		}
		b.WriteString(":\n\n" + codeBlock(Truncate(tail, budget*3/4, url)) + "\n")
	}
	return b.String()
}
