package dot

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/format")

// pipelineFiles lists the sample pipelines: common/ holds those in the
// subset Graphviz parsers accept too, dialect/ those using the extensions.
func pipelineFiles(t testing.TB, dirs ...string) []string {
	t.Helper()
	var files []string
	for _, dir := range dirs {
		m, err := filepath.Glob(filepath.Join("testdata", dir, "*.dot"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no pipelines under testdata/%v", dirs)
	}
	return files
}

// TestFormatGolden pins the canonical layout, and checks that every sample
// pipeline parses with exact positions and survives formatting.
func TestFormatGolden(t *testing.T) {
	for _, file := range pipelineFiles(t, "common", "dialect") {
		name := strings.TrimSuffix(filepath.Base(file), ".dot")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			g := mustParse(t, string(src))
			checkPositions(t, src, g)
			checkRoundTrip(t, g)
			golden := filepath.Join("testdata", "format", name+".golden")
			got := Format(g)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(got), string(want)); diff != "" {
				t.Errorf("Format (-got +want):\n%s", diff)
			}
		})
	}
}

func TestFormatBuiltInCode(t *testing.T) {
	g := &Graph{ID: "node", Stmts: []Stmt{
		&AttrStmt{Kind: GraphAttrs},
		&AssignStmt{Attr: Attr{Key: "goal", Value: Value{Kind: StringValue, Text: "say \"hi\"\n\tC:\\x"}}},
		&NodeStmt{ID: Ident{Name: "a"}, Attrs: []Attr{
			{Key: "timeout", Value: Value{Kind: DurationValue, Text: "5m"}},
			{Key: "empty", Value: Value{Kind: StringValue}},
		}},
		&EdgeStmt{Nodes: []Ident{{Name: "a"}, {Name: "b"}}},
		&Subgraph{ID: "two words", Stmts: []Stmt{&Subgraph{}}},
		nil,
	}}
	want := "digraph \"node\" {\n" +
		"\tgraph []\n" +
		"\tgoal = \"say \\\"hi\\\"\\n\\tC:\\\\x\"\n" +
		"\ta [timeout=5m, empty=\"\"]\n" +
		"\ta -> b\n" +
		"\tsubgraph \"two words\" {\n" +
		"\t\t{\n" +
		"\t\t}\n" +
		"\t}\n" +
		"}\n"
	if diff := cmp.Diff(g.String(), want); diff != "" {
		t.Errorf("String (-got +want):\n%s", diff)
	}
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b`, `a\b`, "a\nb\tc", `\d \. \\n`, "cr\r\nlf", "é ✓", "\\", "\"\\\""} {
		got := quote(s)
		if back := unquote(got[1 : len(got)-1]); back != s {
			t.Errorf("unquote(quote(%q)) = %q via %s", s, back, got)
		}
	}
}
