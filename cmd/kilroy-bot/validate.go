package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

const validateUsage = `usage: kilroy-bot validate [--json] [--repo DIR] [--agents FILE] [FILE...]

Checks Attractor pipelines (.dot) and repository configuration
(config.yml, against the shipped JSON Schema) and prints one line per
problem:
  FILE:LINE:COL: severity: message [rule]
followed by the source line and a "fix:" hint. Without FILE it checks the
repository's .kilroy/: every .kilroy/*.dot, and .kilroy/config.yml with
the graph of every pipeline it names.

Flags:
  --json       print the problems as one JSON array
  --repo DIR   the repository to check without FILE (default: the one
               around the current directory)
  --agents FILE
               the agents file of kilroy-bot run (or a server policy file):
               decoded as a run reads it; every box node checked against
               the backend a run would get from it (and the provider keys
               of this shell); a warning for each agent CLI backend whose
               model endpoint its nodes' sandbox.network does not reach.
               Without it a repository check uses .kilroy/agents.yml when
               there is one, and otherwise warns once per pipeline with
               box nodes that none is given

Exit status: 0 clean or warnings only, 1 errors, 2 usage or unreadable file.
`

// runValidate implements `kilroy-bot validate [--json] [--repo DIR] [--agents FILE] [FILE...]`.
// Diagnostics go to stdout (text, or with --json one JSON array for all
// files); usage and unreadable files are reported on stderr.
func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	va, err := parseValidateArgs(args)
	if errors.Is(err, flag.ErrHelp) { // -h, --help
		fmt.Fprint(stdout, validateUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot validate: %v\n\n%s", err, validateUsage)
		return 2
	}
	var targets []validateTarget
	if len(va.files) == 0 {
		targets, err = repoTargets(va.repo)
		if err != nil && va.agents != "" {
			targets, err = nil, nil // only the agents file, outside a repository
		}
		if err != nil {
			fmt.Fprintf(stderr, "kilroy-bot validate: %v\n", err)
			return 2
		}
	} else {
		for _, f := range va.files {
			targets = append(targets, validateTarget{path: f, display: f})
		}
	}
	ac := agentsCheck{repo: len(va.files) == 0}
	givenAgents := va.agents // checked as a file of its own only when named
	if ac.repo && va.agents == "" {
		if p := filepath.Join(repoRoot(va.repo), ".kilroy", "agents.yml"); fileExists(p) {
			va.agents = p
		}
	}
	if va.agents != "" {
		// A file named with --agents that does not decode is reported
		// below, by line, as checkAgentsFile finds it.
		p, err := loadLocalPolicy(va.agents)
		switch {
		case err == nil:
			cfg := p.Agents
			ac.path, ac.cfg, ac.host = va.agents, &cfg, sandbox.HostEnv()
		case givenAgents == "":
			fmt.Fprintf(stderr, "kilroy-bot validate: %v\n", err)
			return 2
		}
	}
	var all attractor.Diagnostics
	sources := map[string][]byte{}
	unreadable := 0
	if givenAgents != "" {
		src, err := readPipeline(va.agents)
		if err != nil {
			fmt.Fprintf(stderr, "kilroy-bot validate: %v\n", err)
			unreadable++
		} else {
			sources[va.agents] = src
			all = append(all, checkAgentsFile(va.agents, src)...)
		}
	}
	for _, tg := range targets {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "kilroy-bot validate: %v\n", ctx.Err())
			return 2
		}
		src, err := readPipeline(tg.path)
		if err != nil {
			fmt.Fprintf(stderr, "kilroy-bot validate: %v\n", err)
			unreadable++
			continue
		}
		sources[tg.display] = src
		all = append(all, tg.check(src, ac)...)
	}
	if jsonOut := va.json; jsonOut {
		if err := writeJSON(stdout, all); err != nil {
			fmt.Fprintf(stderr, "kilroy-bot validate: %v\n", err)
			return 2
		}
	} else {
		writeText(stdout, all, sources)
		fmt.Fprintln(stdout, summary(all, len(sources), unreadable))
	}
	switch {
	case unreadable > 0:
		return 2
	case all.HasErrors():
		return 1
	}
	return 0
}

// validateArgs are validate's flags and files.
type validateArgs struct {
	json   bool
	repo   string
	agents string
	files  []string
}

// parseValidateArgs accepts flags before, between or after file names.
func parseValidateArgs(args []string) (validateArgs, error) {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var va validateArgs
	fs.BoolVar(&va.json, "json", false, "print diagnostics as a JSON array")
	fs.StringVar(&va.agents, "agents", "", "agents file of kilroy-bot run, or a server policy file")
	fs.StringVar(&va.repo, "repo", "", "repository whose .kilroy/ to check")
	for {
		if err := fs.Parse(args); err != nil {
			return va, err
		}
		if fs.NArg() == 0 {
			break
		}
		va.files = append(va.files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if va.repo != "" && len(va.files) > 0 {
		return va, errors.New("--repo checks a repository's .kilroy/; give either --repo or files, not both")
	}
	if va.repo == "" {
		va.repo = "."
	}
	return va, nil
}

// readPipeline reads a file, with a message that says which file and why.
func readPipeline(name string) ([]byte, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	return src, nil
}

func writeJSON(w io.Writer, ds attractor.Diagnostics) error {
	if ds == nil {
		ds = attractor.Diagnostics{} // [] rather than null for tools
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ds); err != nil {
		return fmt.Errorf("encode diagnostics: %w", err)
	}
	return nil
}

// writeText prints each diagnostic gcc-style, then the source line with a
// caret under the column, then the fix, all indented so that problem
// matchers only see the first line.
func writeText(w io.Writer, ds attractor.Diagnostics, sources map[string][]byte) {
	texts := map[string]*sourceText{}
	for _, d := range ds {
		fmt.Fprintln(w, d.String())
		st := texts[d.File]
		if st == nil {
			st = newSourceText(sources[d.File])
			texts[d.File] = st
		}
		if line, ok := st.line(d.Line); ok {
			shown, pad := clipLine(line, d.Col)
			fmt.Fprintf(w, "  %5d | %s\n", d.Line, shown)
			fmt.Fprintf(w, "        | %s^\n", pad)
		}
		if d.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", d.Fix)
		}
	}
}

// sourceText finds the lines of one file: the text is converted once and
// the line starts indexed once, so printing thousands of diagnostics on
// one long line, or on the last lines of a long file, costs each only its
// own line.
type sourceText struct {
	text   string
	starts []int // byte offset of each line
}

func newSourceText(src []byte) *sourceText {
	st := &sourceText{text: string(src), starts: []int{0}}
	for i, c := range src {
		if c == '\n' {
			st.starts = append(st.starts, i+1)
		}
	}
	return st
}

// line returns line n (from 1) without its line ending.
func (st *sourceText) line(n int) (string, bool) {
	if n < 1 || n > len(st.starts) {
		return "", false
	}
	end := len(st.text)
	if n < len(st.starts) {
		end = st.starts[n] - 1
	}
	return strings.TrimRight(st.text[st.starts[n-1]:end], "\r"), true
}

// maxShownLine is how many bytes of a source line a diagnostic shows:
// generated pipelines put a whole prompt on one line of a thousand
// characters or more, which would bury the caret.
const maxShownLine = 160

// clipLine returns the part of line to show, at most maxShownLine bytes
// around byte column col with "…" where it was cut, and the white space
// that puts a caret under col in it.
func clipLine(line string, col int) (shown, pad string) {
	if len(line) <= maxShownLine {
		return line, caretPad(line, col)
	}
	at := min(max(col-1, 0), len(line))
	start := max(at-maxShownLine/2, 0)
	end := min(start+maxShownLine, len(line))
	start = max(end-maxShownLine, 0)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start++
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	shown, pad = line[start:end], caretPad(line[start:end], at-start+1)
	if start > 0 {
		shown, pad = "…"+shown, " "+pad
	}
	if end < len(line) {
		shown += "…"
	}
	return shown, pad
}

// caretPad returns the white space that puts a caret under byte column
// col of line: one space per character before it, tabs kept so the caret
// lines up in a terminal.
func caretPad(line string, col int) string {
	var b strings.Builder
	for i, r := range line {
		if i >= col-1 {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// summary reads "2 errors, 1 warning in 1 file" (infos only when present).
func summary(ds attractor.Diagnostics, files, unreadable int) string {
	s := plural(ds.Count(attractor.SeverityError), "error") + ", " + plural(ds.Count(attractor.SeverityWarning), "warning")
	if n := ds.Count(attractor.SeverityInfo); n > 0 {
		s += ", " + plural(n, "info")
	}
	s += " in " + plural(files, "file")
	if unreadable > 0 {
		s += "; " + plural(unreadable, "file") + " could not be read"
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
