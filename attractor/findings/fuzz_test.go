package findings

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds cover every recogniser and the edges of the line reader.
var fuzzSeeds = []string{
	mixedSample,
	"error[E0308]: mismatched types\n --> src/main.rs:4:18\n",
	"thread 'a' panicked at src/lib.rs:1:1:\n",
	"=== RUN   TestA\n    a_test.go:1: x\n--- PASS: TestA (0.00s)\nFAIL\tgithub.com/kilroy-bot/demo/x\t0.1s\n",
	"___ test_a ___\ntests/t.py:3: in test_a\nE   assert 0\nFAILED tests/t.py::test_a - assert 0\n",
	"src/a.ts(1,2): error TS1: m\nsrc/a.ts:1:2 - warning TS2: m\n",
	"/home/dev/proj/a.js:1:1: m [Warning/r]\n",
	"a.y:1.2-3.4: error: m\n../x.go:1: m\n/home/dev/proj/../x.go:1:1: m\n",
	"\x1b[31ma.go:1:1: m\x1b]8;;x\x07\r\n\x1b",
	"a.go:999999999:999999999: m\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{Workspace: ws, GoModule: "github.com/kilroy-bot/demo"}
		got := Parse(data, opts)
		checkInvariants(t, got, DefaultMax)
		opts.Max = 3
		checkInvariants(t, Parse(data, opts), 3)
	})
}

// checkInvariants asserts what every caller relies on: findings usable as
// annotations on files inside the workspace.
func checkInvariants(t *testing.T, fs []Finding, max int) {
	t.Helper()
	if len(fs) > max {
		t.Fatalf("%d findings, cap %d", len(fs), max)
	}
	seen := make(map[Finding]bool)
	for _, f := range fs {
		p := f.Path
		if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") || !utf8.ValidString(p) {
			t.Errorf("bad path %q in %+v", p, f)
		}
		if f.Line < 1 || f.Column < 0 || (f.EndLine != 0 && f.EndLine < f.Line) {
			t.Errorf("bad position in %+v", f)
		}
		if f.Level.Rank() == 0 || f.Tool == "" || f.Message == "" || !utf8.ValidString(f.Message) {
			t.Errorf("bad level, tool or message in %+v", f)
		}
		if seen[f] {
			t.Errorf("duplicate %+v", f)
		}
		seen[f] = true
	}
}
