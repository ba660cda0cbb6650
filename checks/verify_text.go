package checks

import (
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// verifySummary describes the node: outcome, command, attempts and time,
// checkpoint, findings, links.
func verifySummary(v *RunView, n *NodeView, opts RenderOptions, rep VerifyReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s **%s**\n\n", stateSymbol(n.State), cell(rep.Title))
	fmt.Fprintf(&b, "Node %s%s of pipeline %s", code(n.ID), kindNote(n.Kind), code(v.Pipeline))
	if v.RunID != "" {
		b.WriteString(", run " + code(v.RunID))
	}
	b.WriteString("\n\n")
	if n.Command != "" {
		b.WriteString("Command: " + code(clip(n.Command, 500)) + "\n\n")
	}
	facts := []string{"Attempts: " + fmt.Sprint(n.Attempts), "Duration: " + duration(n.Duration)}
	if c := opts.commit(n.CheckpointSHA); c != "" {
		facts = append(facts, "Checkpoint: "+c)
	}
	if u := usageFact(n); u != "" {
		facts = append(facts, u)
	}
	b.WriteString(strings.Join(facts, " · ") + "\n\n")
	if k := len(rep.Annotations) + rep.Omitted; k > 0 {
		fmt.Fprintf(&b, "%s annotated on their lines", plural(k, "finding"))
		if rep.Omitted > 0 {
			fmt.Fprintf(&b, "; %d more findings not shown", rep.Omitted)
		}
		b.WriteString(".\n\n")
	}
	var links []string
	if u := opts.logURL(n.ID); u != "" && u != opts.RunURL {
		links = append(links, link("full log", u))
	}
	if opts.RunURL != "" {
		links = append(links, link("run details", opts.RunURL))
	}
	if len(links) > 0 {
		b.WriteString(strings.Join(links, " · ") + "\n")
	}
	return b.String()
}

// kindNote is " (kind)" after a node's name, or nothing when the kind is
// unknown: a check adopted without the pipeline (the host failed before
// loading it) knows only the node's ID.
func kindNote(k attractor.Kind) string {
	if k == "" {
		return ""
	}
	return " (" + cell(string(k)) + ")"
}

// verifyText is the node's detail: why it did not pass, artifact paths,
// the findings that did not fit, the output tail.
func verifyText(n *NodeView, opts RenderOptions, omitted int) string {
	var b strings.Builder
	url := opts.logURL(n.ID)
	if r := firstNonEmpty(n.Outcome.FailureReason, n.SkipReason); r != "" && n.State != StateSuccess {
		b.WriteString("### Reason\n\n" + codeBlock(Truncate(r, MaxOutput/4, url)) + "\n")
	}
	if n.Kind == attractor.KindVerifyArtifacts {
		b.WriteString(artifactTable(readArtifacts(n.Outcome)))
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "**%d more findings not shown**: a check carries at most %d annotations", omitted, opts.maxAnnotations())
		if url != "" {
			b.WriteString("; every one is in the " + link("full log", url))
		}
		b.WriteString(".\n\n")
	}
	if n.State != StateSuccess {
		if tail := strings.TrimSpace(opts.outputTail(n)); tail != "" {
			b.WriteString("### Output (tail)\n\n" + codeBlock(Truncate(tail, MaxOutput/2, url)))
		}
	}
	return b.String()
}

// artifactTable lists offending paths with their rule and where they are.
func artifactTable(a artifactReport) string {
	if len(a.offending) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Paths denied by the artifact policy\n\n| Path | Deny rule | Where |\n|---|---|---|\n")
	for _, p := range a.offending {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", codeCell(p), codeCell(a.rule(p)), firstNonEmpty(a.where(p), "—"))
	}
	return b.String() + "\n"
}
