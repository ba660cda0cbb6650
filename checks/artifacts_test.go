package checks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

func artifactsOutcome(rules any) attractor.Outcome {
	return attractor.Outcome{
		Status:        attractor.StatusFail,
		FailureClass:  attractor.ClassDeterministic,
		FailureReason: "artifact_policy_violation",
		Details: map[string]any{
			"offending_paths":    []any{"web/node_modules/x/index.js", "pkg/__pycache__/m.pyc"},
			"matched_deny_rules": rules,
			"committed_paths":    []string{"web/node_modules/x/index.js"},
			"uncommitted_paths":  []any{"pkg/__pycache__/m.pyc"},
		},
	}
}

func TestArtifactAnnotations(t *testing.T) {
	want := []Annotation{
		{Path: "web/node_modules/x/index.js", StartLine: 1, EndLine: 1, Level: LevelFailure, Title: "artifact policy: denied by **/node_modules/**",
			Message: "web/node_modules/x/index.js matches the deny rule **/node_modules/** (committed on the run branch). Remove it from the run, or carve it out with verify.allow_globs."},
		{Path: "pkg/__pycache__/m.pyc", StartLine: 1, EndLine: 1, Level: LevelFailure, Title: "artifact policy: denied by **/__pycache__/**",
			Message: "pkg/__pycache__/m.pyc matches the deny rule **/__pycache__/** (uncommitted in the worktree). Remove it from the run, or carve it out with verify.allow_globs."},
	}
	for _, tc := range []struct {
		name  string
		rules any
	}{
		{"map from JSON", map[string]any{"web/node_modules/x/index.js": "**/node_modules/**", "pkg/__pycache__/m.pyc": "**/__pycache__/**"}},
		{"map", map[string]string{"web/node_modules/x/index.js": "**/node_modules/**", "pkg/__pycache__/m.pyc": "**/__pycache__/**"}},
		{"sorted list", []string{"**/__pycache__/**", "**/node_modules/**"}},
		{"list from JSON", []any{"**/__pycache__/**", "**/node_modules/**"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := VerifyCheck(verifyView(attractor.KindVerifyArtifacts, artifactsOutcome(tc.rules)), "lint", githubOpts())
			if diff := cmp.Diff(rep.Annotations, want); diff != "" {
				t.Errorf("annotations (-got +want):\n%s", diff)
			}
			if rep.Title != "failed · 2 paths denied by the artifact policy" {
				t.Errorf("title %q", rep.Title)
			}
			if !strings.Contains(rep.Text, "| `pkg/__pycache__/m.pyc` | `**/__pycache__/**` | uncommitted in the worktree |") {
				t.Errorf("text lacks the path table:\n%s", rep.Text)
			}
		})
	}
}

func TestArtifactRuleUndecided(t *testing.T) {
	a := artifactReport{ruleList: []string{"**/*.o", "build/**"}}
	if got := a.rule("web/x.js"); got != "**/*.o, build/**" {
		t.Errorf("rule = %q", got)
	}
	if got := (artifactReport{ruleList: []string{"only/**"}}).rule("x"); got != "only/**" {
		t.Errorf("a single rule is the rule: got %q", got)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"**/node_modules/**", "node_modules/a.js", true},
		{"**/node_modules/**", "a/b/node_modules/c/d.js", true},
		{"**/node_modules/**", "a/node_modules", true},
		{"**/.cargo-target*/**", "x/.cargo-target-1/debug/a", true},
		{"*.o", "a/b.o", false},
		{"**/*.o", "a/b.o", true},
		{"build/**", "src/build/x", false},
	} {
		if got := globMatch(tc.glob, tc.path); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}
