package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/runner"
)

// formatFlag is --format: how a local run's report goes to stdout. Empty
// means the default, which depends on where stdout goes.
type formatFlag string

const (
	formatText     formatFlag = "text"
	formatMarkdown formatFlag = "markdown"
)

func (f *formatFlag) String() string { return string(*f) }

func (f *formatFlag) Set(s string) error {
	switch v := formatFlag(s); v {
	case formatText, formatMarkdown:
		*f = v
		return nil
	}
	return fmt.Errorf("want text or markdown, got %q", s)
}

// summaryStyle says how a run ends on stdout: the short text summary on
// a terminal or with --format text, in colour only on a terminal and
// without NO_COLOR (https://no-color.org: set and not empty); Markdown,
// what report.md holds, with --format markdown or by default into a pipe
// or file.
func summaryStyle(f formatFlag, tty bool, noColor string) (text, color bool) {
	text = f == formatText || (f == "" && tty)
	return text, text && tty && noColor == ""
}

// printSummary writes the end of a run to stdout: the Markdown report
// (then the run directory and branch on stderr), or the text summary,
// which says where those are itself.
func printSummary(stdout, stderr io.Writer, f formatFlag, v *checks.RunView, report string, prep *runner.Prepared) {
	text, color := summaryStyle(f, isTerminalWriter(stdout), os.Getenv("NO_COLOR"))
	if !text {
		fmt.Fprint(stdout, report)
		fmt.Fprintf(stderr, "kilroy: run directory %s, run branch %s\n", prep.Dir, prep.Branch)
		return
	}
	fmt.Fprint(stdout, checks.TerminalSummary(v, checks.TerminalOptions{
		Color: color, RunDir: string(prep.Dir), Branch: prep.Branch, Report: prep.Dir.Report(),
	}))
}

// isTerminalWriter says whether w is a terminal: an *os.File the terminal
// driver knows.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
