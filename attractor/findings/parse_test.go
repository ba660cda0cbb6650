package findings

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseGeneric(t *testing.T) {
	runCases(t, []parseCase{{
		name: "mypy, flake8, shellcheck, make, bison",
		in: `src/app.py:12: error: Incompatible return value type (got "int", expected "str")  [return-value]
src/app.py:20: note: Revealed type is "builtins.int"
Found 1 error in 1 file (checked 3 source files)
src/app.py:3:1: E302 expected 2 blank lines, found 1
scripts/build.sh:5:8: warning: Double quote to prevent globbing and word splitting. [SC2086]
Makefile:12: *** missing separator.  Stop.
make: *** [Makefile:5: build] Error 2
grammar.y:14.3-16.7: error: syntax error, unexpected identifier
docs/guide.md:40: Warning: line too long
`,
		want: []Finding{
			fd("src/app.py", 12, 0, LevelError, ToolGeneric, `Incompatible return value type (got "int", expected "str")  [return-value]`),
			fd("src/app.py", 20, 0, LevelNotice, ToolGeneric, `Revealed type is "builtins.int"`),
			fd("src/app.py", 3, 1, LevelError, ToolGeneric, "E302 expected 2 blank lines, found 1"),
			fd("scripts/build.sh", 5, 8, LevelWarning, ToolGeneric, "Double quote to prevent globbing and word splitting. [SC2086]"),
			fd("Makefile", 12, 0, LevelError, ToolGeneric, "*** missing separator.  Stop."),
			{Path: "grammar.y", Line: 14, Column: 3, EndLine: 16, Level: LevelError, Tool: ToolGeneric, Message: "syntax error, unexpected identifier"},
			fd("docs/guide.md", 40, 0, LevelWarning, ToolGeneric, "line too long"),
		},
	}})
}

func TestParseConfinement(t *testing.T) {
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	runCases(t, []parseCase{
		{
			name: "inside the workspace",
			in: lines(
				"/home/dev/proj/a/b.go:1:2: absolute",
				"./a/../b.go:2: dot segments",
				"/home/dev/proj/./sub//c.go:5:1: unclean absolute",
				"a/./d.go:3: unclean relative",
				".eslintrc.json:1:1: dot file",
			),
			want: []Finding{
				fd("a/b.go", 1, 2, LevelError, ToolGo, "absolute"),
				fd("b.go", 2, 0, LevelError, ToolGo, "dot segments"),
				fd("sub/c.go", 5, 1, LevelError, ToolGo, "unclean absolute"),
				fd("a/d.go", 3, 0, LevelError, ToolGo, "unclean relative"),
				fd(".eslintrc.json", 1, 1, LevelError, ToolGeneric, "dot file"),
			},
		},
		{
			name: "outside the workspace or not a file",
			in: lines(
				"../x.go:1: parent",
				"a/../../x.go:1: parent after cleaning",
				"/home/dev/project2/x.go:1:1: sibling sharing a prefix",
				"/home/dev/proj:1:1: the workspace itself",
				"/usr/include/stdio.h:356:12: note: system header",
				"~/x.go:1: home",
				"http://x:80: url",
				"https://example.com/a.go:12: url with a file",
				"12:30:45: timestamp",
				"Error: 3:4",
				"localhost:8080: connection refused",
				"10.0.0.1:8080: connection refused",
				"v1.2.3:4: version",
				"a.go:0: line zero",
				"a.go:1234567890: line too large",
				"a.go:12: ",
				"a go:1: space in path",
				"a.go:12:5 no colon after column",
				"    indented.c:3: error: source excerpts and context are indented",
			),
			want: nil,
		},
		{
			name: "workspace with a trailing slash",
			opts: Options{Workspace: ws + "/"},
			in:   "/home/dev/proj/x.c:1:1: error: e\n",
			want: []Finding{fd("x.c", 1, 1, LevelError, ToolGCC, "e")},
		},
		{
			name: "the workspace where the command saw it (a jail's)",
			opts: Options{NodeWorkspace: "/workspace"},
			in: lines(
				"/workspace/pkg/x.go:3:1: in the jail",
				"/home/dev/proj/pkg/y.go:4:1: on the host",
				"/workspace2/z.go:1:1: sibling sharing a prefix",
				"/kilroy/stage/out.go:1:1: the stage directory",
			),
			want: []Finding{
				fd("pkg/x.go", 3, 1, LevelError, ToolGo, "in the jail"),
				fd("pkg/y.go", 4, 1, LevelError, ToolGo, "on the host"),
			},
		},
		{
			name: "the root as workspace",
			opts: Options{Workspace: "/"},
			in:   "/x.c:1:1: error: e\nsrc/y.c:2:1: error: f\n",
			want: []Finding{
				fd("x.c", 1, 1, LevelError, ToolGCC, "e"),
				fd("src/y.c", 2, 1, LevelError, ToolGCC, "f"),
			},
		},
	})
}

func TestParseNoWorkspace(t *testing.T) {
	got := Parse([]byte("/home/dev/proj/x.go:1:1: abs\ny.go:2:1: rel\n"), Options{})
	want := []Finding{fd("y.go", 2, 1, LevelError, ToolGo, "rel")}
	if diff := cmpDiff(got, want); diff != "" {
		t.Errorf("Parse() mismatch (-got +want):\n%s", diff)
	}
}

func TestParseLines(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "ANSI codes, OSC hyperlinks, CRLF and progress redraws",
			in: "\x1b[01m\x1b[Ksrc/main.c:10:13:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[K'y' undeclared\r\n" +
				"\x1b]8;;file:///home/dev/proj/a.go\x1b\\a.go\x1b]8;;\x1b\\:3:1: linked\n" +
				"building 10%\rbuilding 90%\rb.go:4:2: after progress\r\n" +
				"c.go:5:1: cut off colour \x1b[3",
			want: []Finding{
				fd("src/main.c", 10, 13, LevelError, ToolGCC, "'y' undeclared"),
				fd("a.go", 3, 1, LevelError, ToolGo, "linked"),
				fd("b.go", 4, 2, LevelError, ToolGo, "after progress"),
				fd("c.go", 5, 1, LevelError, ToolGo, "cut off colour"),
			},
		},
		{
			name: "duplicates are dropped, first appearance kept",
			in: `a.go:1:1: first
b.go:2:1: second
a.go:1:1: first
a.go:1:1: different message
a.go:1:1: warning: first
`,
			want: []Finding{
				fd("a.go", 1, 1, LevelError, ToolGo, "first"),
				fd("b.go", 2, 1, LevelError, ToolGo, "second"),
				fd("a.go", 1, 1, LevelError, ToolGo, "different message"),
				fd("a.go", 1, 1, LevelWarning, ToolGo, "first"),
			},
		},
		{
			name: "invalid UTF-8 in a message",
			in:   "a.go:1:1: bad \xff byte\n\xff.go:1:1: bad path\n",
			want: []Finding{fd("a.go", 1, 1, LevelError, ToolGo, "bad \uFFFD byte")},
		},
	})
}

func TestParseCap(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1500; i++ {
		fmt.Fprintf(&b, "a.go:%d:1: finding %d\n", i, i)
	}
	for _, tc := range []struct {
		max, want int
	}{{0, DefaultMax}, {-1, DefaultMax}, {10, 10}, {2000, 1500}} {
		got := Parse([]byte(b.String()), Options{Workspace: ws, Max: tc.max})
		if len(got) != tc.want {
			t.Errorf("Max %d: got %d findings, want %d", tc.max, len(got), tc.want)
			continue
		}
		if last := got[len(got)-1]; last.Line != tc.want {
			t.Errorf("Max %d: last finding at line %d, want %d (the first ones kept)", tc.max, last.Line, tc.want)
		}
	}
}

func TestParseLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*maxLine)
	in := "a.go:1:1: " + long + "\n" + long + "\nb.go:2:1: after\n" + "c.go:3:1: " + long
	got := Parse([]byte(in), Options{Workspace: ws})
	if len(got) != 3 {
		t.Fatalf("got %d findings, want 3: %+v", len(got), got)
	}
	for _, f := range got {
		if len(f.Message) > maxLine {
			t.Errorf("%s: message of %d bytes, want at most %d", f.Path, len(f.Message), maxLine)
		}
	}
	if got[1].Message != "after" {
		t.Errorf("second finding %q, want %q", got[1].Message, "after")
	}
}

func TestParseDoesNotModifyInput(t *testing.T) {
	in := "/home/dev/proj/src/index.js:3:10: Missing semicolon. [Error/semi]\n\x1b[1ma.go:1:1: x\x1b[0m\n"
	buf := []byte(in)
	Parse(buf, Options{Workspace: ws})
	if string(buf) != in {
		t.Errorf("Parse changed its input to %q", buf)
	}
}
