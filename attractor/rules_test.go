package attractor

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// ruleDoc is one rule's section of docs/rules.md.
type ruleDoc struct {
	id, bad, fixed string
}

// readRuleDocs splits docs/rules.md into "## `rule`" sections and takes
// the first two ```dot blocks of each: the failing example and its fix.
func readRuleDocs(t *testing.T) map[string]ruleDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile("(?m)^## `([a-z_]+)`$")
	block := regexp.MustCompile("(?s)```dot\n(.*?)```")
	docs := map[string]ruleDoc{}
	locs := heading.FindAllStringSubmatchIndex(string(b), -1)
	for i, loc := range locs {
		end := len(b)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		id := string(b[loc[2]:loc[3]])
		blocks := block.FindAllStringSubmatch(string(b[loc[1]:end]), -1)
		if len(blocks) < 2 {
			t.Errorf("docs/rules.md: section %s needs a failing example and a fixed one", id)
			continue
		}
		docs[id] = ruleDoc{id, blocks[0][1], blocks[1][1]}
	}
	return docs
}

// TestRulesDocumented keeps docs/rules.md and the rule table in sync: each
// rule has a section, and each section is a rule.
func TestRulesDocumented(t *testing.T) {
	docs := readRuleDocs(t)
	for _, r := range Rules() {
		if _, ok := docs[r.ID]; !ok {
			t.Errorf("rule %s is not documented in docs/rules.md", r.ID)
		}
		if r.Severity == "" || r.Summary == "" {
			t.Errorf("rule %s has no severity or summary", r.ID)
		}
	}
	for id := range docs {
		if ruleSeverity(id) == "" {
			t.Errorf("docs/rules.md documents %s, which is not a rule", id)
		}
	}
}

// TestRuleExamples loads each documented example: the failing one must
// report its rule (golden diagnostics in testdata/rules/RULE.golden), the
// fixed one must not report it and must have no errors.
func TestRuleExamples(t *testing.T) {
	for id, doc := range readRuleDocs(t) {
		t.Run(id, func(t *testing.T) {
			_, bad, _ := Load("ci.dot", []byte(doc.bad))
			if !hasRule(bad, id) {
				t.Errorf("failing example does not report %s:\n%s", id, formatDiags(bad))
			}
			checkGolden(t, filepath.Join("testdata", "rules", id+".golden"), formatDiags(bad))
			_, fixed, _ := Load("ci.dot", []byte(doc.fixed))
			if hasRule(fixed, id) || fixed.HasErrors() {
				t.Errorf("fixed example still reports problems:\n%s", formatDiags(fixed))
			}
		})
	}
}

func hasRule(ds Diagnostics, id string) bool {
	for _, d := range ds {
		if d.Rule == id {
			return true
		}
	}
	return false
}

// formatDiags renders diagnostics one per line plus the fix, as goldens
// store them. Every diagnostic must carry a known rule and a fix.
func formatDiags(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintln(&b, d.String())
		if d.Node != "" {
			fmt.Fprintf(&b, "  node: %s\n", d.Node)
		}
		if d.Edge != nil {
			fmt.Fprintf(&b, "  edge: %s -> %s\n", d.Edge.From, d.Edge.To)
		}
		fmt.Fprintf(&b, "  fix: %s\n", d.Fix)
		if d.Severity == "" || d.Fix == "" || d.Message == "" {
			fmt.Fprintf(&b, "  INCOMPLETE DIAGNOSTIC\n")
		}
	}
	return b.String()
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(got, string(want)); diff != "" {
		t.Errorf("%s (-got +want):\n%s", path, diff)
	}
	if strings.Contains(got, "INCOMPLETE DIAGNOSTIC") {
		t.Errorf("%s: a diagnostic lacks severity, message or fix", path)
	}
}
