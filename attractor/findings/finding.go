package findings

import "slices"

// Level is the severity of a finding, named as GitHub names annotation
// levels so a finding maps onto an annotation without translation.
type Level string

const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	// LevelNotice covers compiler "note", "info", "remark" and similar: context
	// that helps read an error rather than a problem of its own.
	LevelNotice Level = "notice"
)

// Rank orders levels by severity: the higher, the more severe. An unknown
// level ranks below notice.
func (l Level) Rank() int {
	switch l {
	case LevelError:
		return 3
	case LevelWarning:
		return 2
	case LevelNotice:
		return 1
	}
	return 0
}

// Tool names say which format recognised a finding.
const (
	ToolGo        = "go"         // go build, go vet, staticcheck, golangci-lint
	ToolGoTest    = "go-test"    // log lines of failing tests
	ToolGCC       = "gcc"        // gcc and clang
	ToolRustc     = "rustc"      // rustc and cargo, including clippy
	ToolRustPanic = "rust-panic" // a panicking Rust test or program
	ToolTSC       = "tsc"
	ToolESLint    = "eslint"
	ToolPytest    = "pytest"
	ToolJava      = "javac" // javac as Maven prints it: path:[line,col]
	ToolKotlin    = "kotlinc"
	ToolGeneric   = "generic"
)

// Finding is one diagnostic at a position in a workspace file. Path is
// relative to the workspace, slash-separated and clean; Line is at least 1;
// Column and EndLine are 0 when the tool did not say.
type Finding struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty"`
	EndLine int    `json:"end_line,omitempty"`
	Level   Level  `json:"level"`
	Message string `json:"message"`
	Tool    string `json:"tool"`
}

// SortBySeverity puts the most severe findings first and keeps the order of
// output within a level, so a capped list of annotations shows errors first.
func SortBySeverity(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return b.Level.Rank() - a.Level.Rank()
	})
}

// DefaultMax caps the findings of one Parse when Options.Max is not set.
const DefaultMax = 1000

// Options tell Parse where the repository lives and how much to return.
type Options struct {
	// Workspace is the absolute directory of the repository worktree, where
	// the command ran. Relative paths in the output are taken relative to it.
	Workspace string
	// NodeWorkspace is where the command saw the worktree, when that is
	// another path (a jail shows it at a fixed one): absolute paths under
	// it are the worktree's too. Empty: Workspace.
	NodeWorkspace string
	// Max caps the number of findings; 0 (or less) means DefaultMax.
	Max int
	// GoModule is the module path from the workspace's go.mod, if known. go
	// test names only the file of a failing test's log line; with the module
	// path the package line that follows places it in its directory. Without
	// it those files are taken to be at the workspace root.
	GoModule string
}
