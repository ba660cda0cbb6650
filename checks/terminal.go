package checks

import (
	"fmt"
	"strings"
)

// TerminalOptions carry what the terminal summary needs from the host.
type TerminalOptions struct {
	// Color writes ANSI colours. The host decides: a terminal, and no
	// NO_COLOR in the environment (https://no-color.org).
	Color bool
	// RunDir, Branch and Report say where the run's files, commits and
	// Markdown report are; empty ones are left out.
	RunDir, Branch, Report string
	// MaxFindings caps the findings listed under one node; 0 means
	// DefaultTerminalFindings. The report has them all.
	MaxFindings int
	// Redactor cleans everything written; nil still redacts token shapes.
	Redactor *Redactor
}

// DefaultTerminalFindings is how many findings a node lists at most.
const DefaultTerminalFindings = 10

// TerminalSummary is the short text a local run prints on a terminal in
// place of the Markdown report: the verdict, one line per node with a
// mark, its state and time, the findings of each node as
// path:line[:col] lines, the total time, and where the run directory and
// the report are.
func TerminalSummary(v *RunView, o TerminalOptions) string {
	rv := redactView(v, o.Redactor)
	p := painter(o.Color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", p.paint(runColor(rv.Status), p.bold("kilroy/"+rv.Pipeline+":")), o.Redactor.Redact(budgetTitle(rv)+runTitle(rv)))
	var w widths
	for _, n := range rv.Nodes {
		w.id, w.state = max(w.id, len(n.ID)), max(w.state, len(n.State))
	}
	for _, n := range RunOrder(rv.Nodes) {
		writeNodeLine(&b, p, n, w, o)
	}
	if rv.Finished() && rv.Duration > 0 {
		fmt.Fprintf(&b, "%s %s\n", p.dim("took"), duration(rv.Duration))
	}
	if rv.Usage.Attempts > 0 {
		fmt.Fprintf(&b, "%s %s\n", p.dim("agents used"), rv.Usage)
	}
	for _, f := range [][2]string{{"run directory", o.RunDir}, {"run branch", o.Branch}, {"report", o.Report}} {
		if f[1] != "" {
			fmt.Fprintf(&b, "%s %s\n", p.dim(f[0]), f[1])
		}
	}
	return b.String()
}

// widths are the node lines' columns, in bytes.
type widths struct{ id, state int }

// writeNodeLine writes a node's line, then its findings.
func writeNodeLine(b *strings.Builder, p painter, n NodeView, w widths, o TerminalOptions) {
	c := stateColor(n.State)
	line := fmt.Sprintf("  %s %-*s  %s%s", p.paint(c, stateMark(n.State)), w.id, n.ID,
		p.paint(c, string(n.State)), strings.Repeat(" ", w.state-len(n.State)))
	if n.Duration > 0 {
		line += "  " + duration(n.Duration)
	}
	if n.Attempts > 1 {
		line += fmt.Sprintf("  %s", p.dim(plural(n.Attempts, "attempt")))
	}
	if n.Usage.Attempts > 0 {
		line += "  " + p.dim(n.Usage.String())
	}
	if why := nodeWhy(n); why != "" {
		line += "  " + p.dim(clip(o.Redactor.Redact(why), 160))
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	max := o.MaxFindings
	if max <= 0 {
		max = DefaultTerminalFindings
	}
	fs := n.Findings()
	for i, f := range fs {
		if i == max {
			fmt.Fprintf(b, "      %s\n", p.dim(fmt.Sprintf("%d more in the report", len(fs)-max)))
			break
		}
		pos := fmt.Sprintf("%s:%d", f.Path, f.Line)
		if f.Column > 0 {
			pos += fmt.Sprintf(":%d", f.Column)
		}
		fmt.Fprintf(b, "      %s %s %s\n", p.bold(pos), p.paint(levelColor(string(f.Level)), string(f.Level)),
			clip(o.Redactor.Redact(firstLineOf(f.Message)), 200))
	}
}

// nodeWhy is the reason shown on a node's line: why it failed, was
// cancelled or skipped.
func nodeWhy(n NodeView) string {
	switch n.State {
	case StateFailed, StateRetrying:
		if len(n.Findings()) > 0 {
			return ""
		}
		return Headline(n.Outcome.FailureReason)
	case StateSkipped, StateCancelled:
		return firstLine(n.SkipReason)
	}
	return ""
}

// stateMark is a one-column mark for a state, readable without colour.
func stateMark(s State) string {
	switch s {
	case StateSuccess:
		return "✓"
	case StatePartial:
		return "~"
	case StateFailed:
		return "✗"
	case StateRetrying:
		return "↻"
	case StateRunning:
		return "…"
	case StateCancelled:
		return "!"
	case StateSkipped:
		return "-"
	}
	return "·"
}

// ANSI SGR colours.
const (
	colorNone   = ""
	colorRed    = "31"
	colorGreen  = "32"
	colorYellow = "33"
	colorDim    = "2"
	colorBold   = "1"
)

func stateColor(s State) string {
	switch s {
	case StateSuccess:
		return colorGreen
	case StateFailed:
		return colorRed
	case StatePartial, StateRetrying, StateCancelled:
		return colorYellow
	case StateSkipped, StatePending:
		return colorDim
	}
	return colorNone
}

func runColor(s RunStatus) string {
	switch s {
	case RunSuccess:
		return colorGreen
	case RunFailed:
		return colorRed
	case RunCancelled, RunPartial:
		return colorYellow
	}
	return colorNone
}

func levelColor(level string) string {
	switch level {
	case "error", "failure":
		return colorRed
	case "warning":
		return colorYellow
	}
	return colorNone
}

// painter wraps text in ANSI colours, or leaves it alone when off.
type painter bool

func (p painter) paint(color, s string) string {
	if !p || color == colorNone {
		return s
	}
	return "\x1b[" + color + "m" + s + "\x1b[0m"
}

func (p painter) bold(s string) string { return p.paint(colorBold, s) }
func (p painter) dim(s string) string  { return p.paint(colorDim, s) }
