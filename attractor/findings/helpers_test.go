package findings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ws is the workspace the test outputs were produced in.
const ws = "/home/dev/proj"

type parseCase struct {
	name string
	opts Options // Workspace defaults to ws
	in   string
	want []Finding
}

func runCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts.Workspace == "" {
				opts.Workspace = ws
			}
			got := Parse([]byte(tc.in), opts)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("Parse() mismatch (-got +want):\n%s", diff)
			}
		})
	}
}

// fd builds a finding tersely: path, line, column, level, tool, message.
func fd(path string, line, col int, lvl Level, tool, msg string) Finding {
	return Finding{Path: path, Line: line, Column: col, Level: lvl, Tool: tool, Message: msg}
}
