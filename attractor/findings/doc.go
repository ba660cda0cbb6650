// Package findings turns the output of a verify command (a compiler, a linter,
// a test runner) into findings: a file inside the repository, a line, an
// optional column, a level and a message, ready to become check-run
// annotations.
//
// The model: Parse reads the output once, line by line, after removing ANSI
// colour codes. Each line is offered to one recogniser per tool family, most
// specific first: rustc, tsc, pytest, go test, then the colon form shared by
// the Go tools, gcc/clang, eslint's unix format and everything else
// ("path:line[:col]: [level:] message"). Some formats spread one diagnostic
// over several lines (a rustc header and its "-->" arrow, a pytest traceback
// and its "FAILED" summary, go test log lines and the package result that
// says which directory they belong to), so the parser keeps a little state
// between lines; all of it is bounded.
//
// A finding is kept only if its path lies inside the workspace: absolute paths
// under Options.Workspace become relative, relative paths (taken relative to
// the workspace, where the command runs) are cleaned, and anything escaping
// is dropped. Parse is pure: it never reads the file system, so a finding may
// name a file that does not exist and the caller may filter those.
package findings
