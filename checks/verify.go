package checks

import (
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// VerifyReport is everything the kilroy/<pipeline>/<node> check says.
type VerifyReport struct {
	Name       string // kilroy/<pipeline>/<node>
	ExternalID string // <run-id>/<node-id>
	Status     string // queued, in_progress or completed
	Conclusion string // set when Status is completed; see NodeConclusion
	Title      string
	Summary    string
	Text       string
	// Annotations are most severe first and at most MaxAnnotations; post
	// them with Batches. Omitted counts those left out, which Text says.
	Annotations []Annotation
	Omitted     int
}

// VerifyCheck renders the check of one verify node. A node the view does
// not know yields a skipped check saying so.
func VerifyCheck(v *RunView, node string, opts RenderOptions) VerifyReport {
	rv := redactView(v, opts.Redactor)
	rep := VerifyReport{
		Name:       "kilroy/" + rv.Pipeline + "/" + node,
		ExternalID: rv.RunID + "/" + node,
	}
	n := rv.Node(node)
	if n == nil {
		rep.Status, rep.Conclusion = StatusCompleted, ConclusionSkipped
		rep.Title = "not in this pipeline"
		rep.Summary = fmt.Sprintf("The pipeline %s has no node %s.", code(rv.Pipeline), code(node))
		return rep
	}
	rep.Status, rep.Conclusion = NodeConclusion(rv, n)
	if rep.Conclusion == ConclusionCancelled {
		withRunReason(rv, n)
	}
	all := nodeAnnotations(n, opts.Redactor)
	rep.Annotations = all[:min(len(all), opts.maxAnnotations())]
	rep.Omitted = len(all) - len(rep.Annotations)
	r := opts.Redactor
	rep.Title = clip(firstLine(r.Redact(verifyTitle(n, rep.Conclusion, len(all)))), maxTitle)
	rep.Summary = Truncate(r.Redact(verifySummary(rv, n, opts, rep)), MaxOutput, opts.logURL(n.ID))
	rep.Text = Truncate(r.Redact(verifyText(n, opts, rep.Omitted)), MaxOutput, opts.logURL(n.ID))
	return rep
}

// nodeAnnotations are the node's findings and artifact-policy paths as
// annotations: fitted to GitHub's limits, without duplicates, most severe
// first.
func nodeAnnotations(n *NodeView, r *Redactor) []Annotation {
	var anns []Annotation
	if n.Kind == attractor.KindVerifyArtifacts {
		anns = readArtifacts(n.Outcome).annotations()
	}
	for _, f := range n.Findings() {
		anns = append(anns, findingAnnotation(f, toolTitle(f.Tool, n.Command, n.ID)))
	}
	for i := range anns {
		anns[i] = fitAnnotation(anns[i], r)
	}
	anns = dedupe(anns)
	SortAnnotations(anns)
	return anns
}

// verifyTitle is the check's one-line verdict.
func verifyTitle(n *NodeView, conclusion string, annotations int) string {
	reason := firstNonEmpty(Headline(n.Outcome.FailureReason), firstLine(n.SkipReason))
	switch conclusion {
	case "":
		if n.State == StateRetrying {
			return fmt.Sprintf("retrying after attempt %d failed", n.Attempts)
		}
		if n.State == StateRunning {
			return "running"
		}
		return "waiting to run"
	case ConclusionSuccess, ConclusionNeutral:
		t := "passed"
		if conclusion == ConclusionNeutral {
			t = "partially passed"
		}
		if annotations > 0 {
			t += " · " + levelCounts(n.Findings())
		}
		return t
	case ConclusionFailure:
		if p := len(readArtifacts(n.Outcome).offending); n.Kind == attractor.KindVerifyArtifacts && p > 0 {
			return "failed · " + plural(p, "path") + " denied by the artifact policy"
		}
		if len(n.Findings()) > 0 {
			return "failed · " + levelCounts(n.Findings())
		}
		return "failed: " + clip(firstNonEmpty(reason, "no reason given"), 150)
	case ConclusionSkipped, ConclusionCancelled:
		return conclusion + ": " + clip(firstNonEmpty(reason, "not run"), 150)
	}
	return clip(firstNonEmpty(reason, conclusion), 150)
}

// levelCounts renders "2 errors, 1 warning".
func levelCounts(fs []findings.Finding) string {
	counts := map[findings.Level]int{}
	for _, f := range fs {
		counts[f.Level]++
	}
	var parts []string
	for _, l := range []findings.Level{findings.LevelError, findings.LevelWarning, findings.LevelNotice} {
		if counts[l] > 0 {
			parts = append(parts, plural(counts[l], string(l)))
			delete(counts, l)
		}
	}
	other := 0
	for _, c := range counts {
		other += c
	}
	if other > 0 {
		parts = append(parts, plural(other, "other finding"))
	}
	return strings.Join(parts, ", ")
}

// withRunReason leads a cancelled node's reason with the run's, such as
// "superseded by 1a2b3c4": the node only knows that its command was
// cancelled, and the engine may report that before the host says why.
// n belongs to a clone of the view, so it may be changed.
func withRunReason(v *RunView, n *NodeView) {
	if v.Status != RunCancelled || v.Reason == "" {
		return
	}
	why := firstLine(v.Reason)
	for _, r := range []*string{&n.Outcome.FailureReason, &n.SkipReason} {
		switch {
		case *r == "":
		case !strings.Contains(*r, why):
			*r = why + ": " + *r
		}
	}
	if n.Outcome.FailureReason == "" && n.SkipReason == "" {
		n.SkipReason = why
	}
}
