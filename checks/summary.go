package checks

import (
	"fmt"
	"strings"
)

// maxTitle keeps titles to one short line; GitHub shows them in lists.
const maxTitle = 200

// Summary renders the kilroy/<pipeline> check: a one-line title, the
// summary (outcome, node table, flowchart, what was skipped and why, the
// goal) and the text (every failing node's reason and output tail). All
// three are redacted and within GitHub's limits.
func Summary(v *RunView, opts RenderOptions) (title, summary, text string) {
	rv := redactView(v, opts.Redactor)
	title = clip(firstLine(opts.Redactor.Redact(budgetTitle(rv)+runTitle(rv))), maxTitle)
	summary = fitSummary(rv, opts)
	text = Truncate(opts.Redactor.Redact(failureText(rv, opts)), MaxOutput, opts.RunURL)
	return title, summary, text
}

// fitSummary assembles the summary, leaving out the flowchart when it
// would not fit (the table says the same), then cutting the middle.
func fitSummary(v *RunView, opts RenderOptions) string {
	graph := flowchart(v)
	if len(graph) > maxMermaid {
		graph = "_The graph is too large to draw here; the table above has every node._\n"
	}
	s := opts.Redactor.Redact(summaryMarkdown(v, opts, graph))
	if len(s) > MaxOutput {
		s = opts.Redactor.Redact(summaryMarkdown(v, opts, "_The graph is left out to fit GitHub's limit._\n"))
	}
	return Truncate(s, MaxOutput, opts.RunURL)
}

// summaryMarkdown is the summary with graph as the flowchart section.
func summaryMarkdown(v *RunView, opts RenderOptions, graph string) string {
	var b strings.Builder
	if v.PushError != "" {
		b.WriteString(pushLine(v) + "\n\n")
	}
	b.WriteString(outcomeLine(v) + "\n\n")
	b.WriteString(runLine(v, opts) + "\n\n")
	for _, n := range v.Notes {
		b.WriteString("> **Note:** " + cell(n) + "\n\n")
	}
	if v.Goal != "" {
		b.WriteString("> **Goal:** " + cell(v.Goal) + "\n\n")
	}
	b.WriteString(nodeTable(v, opts) + "\n")
	b.WriteString(usageSection(v))
	b.WriteString(graph + "\n")
	if s := skippedList(v); s != "" {
		b.WriteString("### Not run\n\n" + s + "\n")
	}
	return b.String()
}

// pushLine is the summary's first line when the run branch could not be
// pushed.
func pushLine(v *RunView) string {
	return "❌ **Run branch not pushed**: " + cell(clip(v.PushError, 300)) +
		" — the checkpoint commits linked below are not on GitHub"
}

// runTitle is the one-line verdict, e.g. "3 of 5 nodes passed · vet
// failed (2 findings)", led by the failed push when there was one.
func runTitle(v *RunView) string {
	if v.PushError != "" && v.Finished() {
		return "run branch not pushed: " + clip(v.PushError, 100) + " · " + nodesTitle(v)
	}
	return nodesTitle(v)
}

// nodesTitle is the verdict on the nodes.
func nodesTitle(v *RunView) string {
	passed, skipped := 0, 0
	for _, n := range v.Nodes {
		switch n.State {
		case StateSuccess, StatePartial:
			passed++
		case StateSkipped:
			skipped++
		}
	}
	count := fmt.Sprintf("%d of %d nodes passed", passed, len(v.Nodes))
	switch v.Status {
	case RunPending:
		return "queued"
	case RunRunning:
		return runningTitle(v, passed)
	case RunSuccess:
		if skipped > 0 {
			return count + " · " + plural(skipped, "node") + " skipped"
		}
		return count
	case RunPartial:
		return count + " · " + toleratedPart(v)
	case RunCancelled:
		return "cancelled: " + firstNonEmpty(firstLine(v.Reason), "run cancelled") + " · " + count
	}
	return count + " · " + failedPart(v)
}

// toleratedPart names the failures a partial run's pipeline tolerated.
func toleratedPart(v *RunView) string {
	return "failed, tolerated by the pipeline (allow_partial or first_success): " + clip(strings.Join(v.Tolerated, ", "), 100)
}

// runningTitle names the nodes under way.
func runningTitle(v *RunView, done int) string {
	var now []string
	for _, n := range v.Nodes {
		if n.State == StateRunning || n.State == StateRetrying {
			now = append(now, n.ID)
		}
	}
	t := fmt.Sprintf("%d of %d nodes passed", done, len(v.Nodes))
	if len(now) > 0 {
		t = "running " + strings.Join(now, ", ") + " · " + t
	}
	return t
}

// failedPart says what failed: the node and its findings, else the reason.
func failedPart(v *RunView) string {
	n := v.Node(v.FailedNode)
	if n == nil {
		return "run failed: " + firstNonEmpty(firstLine(v.Reason), "no reason given")
	}
	if k := len(n.Findings()); k > 0 {
		return fmt.Sprintf("%s failed (%s)", n.ID, plural(k, "finding"))
	}
	return n.ID + " failed: " + clip(firstNonEmpty(Headline(n.Outcome.FailureReason), Headline(v.Reason), "no reason given"), 100)
}

// outcomeLine is the summary's first line.
func outcomeLine(v *RunView) string {
	switch v.Status {
	case RunPending:
		return "⏸️ **Queued**"
	case RunRunning:
		return "⏳ **Running**"
	case RunSuccess:
		return "✅ **Succeeded** in " + duration(v.Duration)
	case RunPartial:
		return "⚠️ **Partial** in " + duration(v.Duration) + ": " + cell(toleratedPart(v))
	case RunCancelled:
		return "🚫 **Cancelled**: " + cell(firstNonEmpty(firstLine(v.Reason), "run cancelled"))
	}
	if v.FailedNode != "" {
		return "❌ **Failed** at " + code(v.FailedNode) + ": " + cell(clip(Headline(v.Reason), 300))
	}
	return "❌ **Failed**: " + cell(clip(firstNonEmpty(firstLine(v.Reason), "no reason given"), 300))
}

// runLine names the run, the commit it ran on and where to read more.
func runLine(v *RunView, opts RenderOptions) string {
	parts := []string{"Pipeline " + code(v.Pipeline)}
	if v.RunID != "" {
		parts = append(parts, "run "+code(v.RunID))
	}
	if v.HeadSHA != "" {
		parts = append(parts, "on "+opts.commit(v.HeadSHA))
	}
	if v.Image != "" {
		parts = append(parts, "image "+code(v.Image)+" @ "+code(v.ImageDigest))
	}
	if opts.RunURL != "" {
		parts = append(parts, link("run details and logs", opts.RunURL))
	}
	return strings.Join(parts, " · ")
}

// nodeTable lists every node in run order (RunOrder).
func nodeTable(v *RunView, opts RenderOptions) string {
	var b strings.Builder
	b.WriteString("| Node | Kind | Status | Attempts | Duration | Checkpoint |\n")
	b.WriteString("|---|---|---|---:|---:|---|\n")
	for _, n := range RunOrder(v.Nodes) {
		name := codeCell(n.ID)
		if n.Label != "" && n.Label != n.ID {
			name += " " + cell(clip(n.Label, 80))
		}
		attempts := "—"
		if n.Attempts > 0 {
			attempts = fmt.Sprint(n.Attempts)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n",
			name, cell(string(n.Kind)), stateCell(n.State), attempts, duration(n.Duration), firstNonEmpty(opts.commit(n.CheckpointSHA), "—"))
	}
	return b.String()
}

// skippedList says, for every node that did not run to the end, why.
func skippedList(v *RunView) string {
	var b strings.Builder
	for _, n := range v.Nodes {
		if n.State != StateSkipped && n.State != StateCancelled {
			continue
		}
		fmt.Fprintf(&b, "- %s %s: %s\n", stateSymbol(n.State), code(n.ID), cell(clip(firstNonEmpty(firstLine(n.SkipReason), string(n.State)), 300)))
	}
	return b.String()
}
