package checks

// RenderOptions carries what rendering needs from the host.
type RenderOptions struct {
	// CommitURL links a commit; nil (a local run) prints short SHAs
	// without links.
	CommitURL func(sha string) string
	// RunURL is the run's page (/runs/{id}); empty for none.
	RunURL string
	// LogURL links a node's full log; nil or "" falls back to RunURL.
	LogURL func(node string) string
	// OutputTail returns the end of a node's output given its stage
	// directory, shown under a failing node; nil shows only the reason.
	// Reading files is the host's business, not this package's.
	OutputTail func(node, dir string) string
	// Redactor cleans everything rendered; nil still redacts token shapes.
	Redactor *Redactor
	// Banner is a line shown first in every check's summary, such as the
	// warning that nodes run without the sandbox; "" for none.
	Banner string
	// MaxAnnotations caps the annotations of one check, the operator's
	// choice below MaxAnnotations; 0 (or anything out of range) means
	// MaxAnnotations.
	MaxAnnotations int
}

// maxAnnotations is the cap in force.
func (o RenderOptions) maxAnnotations() int {
	if o.MaxAnnotations <= 0 || o.MaxAnnotations > MaxAnnotations {
		return MaxAnnotations
	}
	return o.MaxAnnotations
}

// logURL is where the full log of node lives.
func (o RenderOptions) logURL(node string) string {
	if o.LogURL != nil {
		if u := o.LogURL(node); u != "" {
			return u
		}
	}
	return o.RunURL
}

// outputTail is node's output tail, redacted before anything cuts it so
// that no cut can leave half a secret behind.
func (o RenderOptions) outputTail(n *NodeView) string {
	if o.OutputTail == nil {
		return ""
	}
	return o.Redactor.Redact(o.OutputTail(n.ID, n.Dir))
}

// commit renders a checkpoint commit: a short SHA, linked when possible.
func (o RenderOptions) commit(sha string) string {
	if sha == "" {
		return ""
	}
	short := "`" + shortSHA(sha) + "`"
	if o.CommitURL == nil {
		return short
	}
	if u := o.CommitURL(sha); u != "" {
		return "[" + short + "](" + u + ")"
	}
	return short
}

// shortSHA is the 7-character form git prints.
func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// redactView returns a copy of v whose every free text (labels, reasons,
// commands, findings) has been redacted, so escaping and cutting later
// work on clean text and cannot disguise a secret from the redactor.
func redactView(v *RunView, r *Redactor) *RunView {
	c := v.clone()
	c.Goal, c.Reason, c.PushError = r.Redact(c.Goal), r.Redact(c.Reason), r.Redact(c.PushError)
	for i := range c.Notes {
		c.Notes[i] = r.Redact(c.Notes[i])
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		n.Label, n.Command, n.SkipReason = r.Redact(n.Label), r.Redact(n.Command), r.Redact(n.SkipReason)
		n.Outcome.FailureReason = r.Redact(n.Outcome.FailureReason)
		n.Outcome.Notes = r.Redact(n.Outcome.Notes)
		for j := range n.Outcome.Findings {
			f := &n.Outcome.Findings[j]
			f.Message, f.Path = r.Redact(f.Message), r.Redact(f.Path)
		}
	}
	for i := range c.Edges {
		e := &c.Edges[i]
		e.Label, e.Condition = r.Redact(e.Label), r.Redact(e.Condition)
	}
	return c
}
