package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// GitHub's limits on annotations (the checks create/update request schema).
const (
	// AnnotationsPerRequest is the most annotations one create or update
	// request may carry; further ones go in later updates, which append.
	AnnotationsPerRequest = 50
	// MaxAnnotations caps the annotations of one check: twenty requests'
	// worth is more than anyone reads, and the overflow is counted in the
	// check's text instead.
	MaxAnnotations = 1000
	maxAnnTitle    = 255
	maxAnnMessage  = 65536
	maxAnnDetails  = 65536
)

// Annotation levels as GitHub names them.
const (
	LevelNotice  = "notice"
	LevelWarning = "warning"
	LevelFailure = "failure"
)

// Annotation is one check-run annotation, in the REST API's shape.
// Columns are set only on single-line annotations, as GitHub requires.
type Annotation struct {
	Path        string `json:"path"`
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	StartColumn int    `json:"start_column,omitempty"`
	EndColumn   int    `json:"end_column,omitempty"`
	Level       string `json:"annotation_level"`
	Message     string `json:"message"`
	Title       string `json:"title,omitempty"`
	RawDetails  string `json:"raw_details,omitempty"`
}

// levelRank orders annotation levels, most severe highest.
func levelRank(l string) int {
	switch l {
	case LevelFailure:
		return 3
	case LevelWarning:
		return 2
	case LevelNotice:
		return 1
	}
	return 0
}

// annotationLevel maps a finding's level onto GitHub's: an error is a
// failure; anything the parser could not rank is a notice, matching
// findings.Level.Rank.
func annotationLevel(l findings.Level) string {
	switch l {
	case findings.LevelError:
		return LevelFailure
	case findings.LevelWarning:
		return LevelWarning
	}
	return LevelNotice
}

// SortAnnotations orders anns most severe first, keeping the order of
// output within a level.
func SortAnnotations(anns []Annotation) {
	slices.SortStableFunc(anns, func(a, b Annotation) int {
		return cmp.Compare(levelRank(b.Level), levelRank(a.Level))
	})
}

// Batches splits anns into requests of at most size annotations (size <= 0
// means AnnotationsPerRequest), most severe first, so that if a later
// request fails the ones that matter most are already posted. anns is not
// modified.
func Batches(anns []Annotation, size int) [][]Annotation {
	if size <= 0 {
		size = AnnotationsPerRequest
	}
	sorted := slices.Clone(anns)
	SortAnnotations(sorted)
	var out [][]Annotation
	for batch := range slices.Chunk(sorted, size) {
		out = append(out, batch)
	}
	return out
}

// findingAnnotation turns a finding into an annotation titled by tool.
func findingAnnotation(f findings.Finding, title string) Annotation {
	a := Annotation{
		Path:      f.Path,
		StartLine: max(f.Line, 1),
		Level:     annotationLevel(f.Level),
		Message:   firstNonEmpty(strings.TrimSpace(f.Message), fmt.Sprintf("%s reported by %s", f.Level, title)),
		Title:     title,
	}
	a.EndLine = max(f.EndLine, a.StartLine)
	if a.EndLine == a.StartLine && f.Column > 0 {
		// A finding names one column; GitHub highlights start..end.
		a.StartColumn, a.EndColumn = f.Column, f.Column
	}
	return a
}

// fitAnnotation enforces the schema's field limits and the redactor on an
// annotation's text.
func fitAnnotation(a Annotation, r *Redactor) Annotation {
	a.Path = r.Redact(a.Path)
	a.Title = clip(strings.Join(strings.Fields(r.Redact(a.Title)), " "), maxAnnTitle)
	a.Message = clip(r.Redact(a.Message), maxAnnMessage)
	a.RawDetails = clip(r.Redact(a.RawDetails), maxAnnDetails)
	return a
}

// dedupe drops annotations identical to an earlier one: tools that print
// a diagnostic twice (once per pass, once in a summary) should not get
// two marks on one line.
func dedupe(anns []Annotation) []Annotation {
	seen := make(map[Annotation]bool, len(anns))
	out := anns[:0]
	for _, a := range anns {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// familyTitle is the human name of a finding family that is one
// program; "" for the Go family and generic findings, which the command
// names better ("go vet", "staticcheck").
func familyTitle(tool string) string {
	switch tool {
	case findings.ToolGoTest:
		return "go test"
	case findings.ToolGCC:
		return "gcc/clang"
	case findings.ToolRustc:
		return "rustc"
	case findings.ToolRustPanic:
		return "rust panic"
	case findings.ToolTSC, findings.ToolESLint, findings.ToolPytest, findings.ToolJava, findings.ToolKotlin:
		return tool
	}
	return ""
}

// toolTitle names what reported a finding: "go vet" from the node's
// command for the Go family, the tool for the others, else the command's
// program or the node.
func toolTitle(tool, command, node string) string {
	if t := familyTitle(tool); t != "" {
		return t
	}
	if p := program(command); p != "" {
		return p
	}
	if tool != "" && tool != findings.ToolGeneric {
		return tool
	}
	return node
}

// program is the program a shell command starts, with its subcommand for
// the multi-tools whose subcommand is the tool ("go vet", "cargo clippy",
// "npm run lint" → "npm run"), skipping leading VAR=value assignments.
func program(command string) string {
	words := strings.Fields(command)
	for len(words) > 0 && strings.Contains(words[0], "=") {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	name := words[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "go", "cargo", "npm", "pnpm", "yarn", "npx", "python", "python3", "uv", "make":
		if len(words) > 1 && !strings.HasPrefix(words[1], "-") {
			return name + " " + words[1]
		}
	}
	return name
}
