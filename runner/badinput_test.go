package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestBadInput: each mistake is refused before anything runs, with a
// one-line error wrapping ErrUsage that says how to fix it, and nothing
// changes in the user's repository: no run branch, no worktree, HEAD,
// index and files as they were. The run directory is left empty, so the
// same command works once the mistake is fixed.
func TestBadInput(t *testing.T) {
	okDot := pipeline(`
  one [shape=parallelogram, tool_command="true"]
  start -> one -> exit`)
	for _, tc := range []struct {
		name  string
		files map[string]string                      // committed
		setup func(t *testing.T, repo string)        // after the commit
		graph string                                 // LocalOptions.Graph
		want  []string                               // substrings of the error
		check func(t *testing.T, err error)          // more about the error
		fix   func(t *testing.T, repo string) string // makes the run start; returns Graph
	}{
		{
			name:  "dirty index",
			files: map[string]string{".kilroy/ci.dot": okDot, "a.txt": "a\n"},
			setup: func(t *testing.T, repo string) {
				gittest.WriteFile(t, filepath.Join(repo, "a.txt"), "changed\n")
				gittest.Git(t, repo, "add", "a.txt")
			},
			want: []string{"staged changes", "git commit", "git restore --staged"},
			fix: func(t *testing.T, repo string) string {
				gittest.Git(t, repo, "commit", "--quiet", "-m", "staged")
				return ""
			},
		},
		{
			name: "missing graph",
			files: map[string]string{
				".kilroy/config.yml": "version: 1\npipelines:\n  ci:\n    graph: .kilroy/missing.dot\n",
				".kilroy/ci.dot":     okDot,
			},
			want: []string{`pipeline "ci"`, ".kilroy/missing.dot is not in commit", "commit the file, or fix `graph:` in .kilroy/config.yml"},
			fix: func(t *testing.T, repo string) string {
				gittest.CommitFiles(t, repo, "add graph", map[string]string{".kilroy/missing.dot": okDot})
				return ""
			},
		},
		{
			name:  "unknown pipeline",
			files: map[string]string{".kilroy/ci.dot": okDot, ".kilroy/deploy.dot": okDot},
			graph: "deplyo",
			want:  []string{`no pipeline "deplyo"`, "pipelines: ci, deploy", `did you mean "deploy"?`},
			fix:   func(*testing.T, string) string { return "deploy" },
		},
		{
			name:  "unknown pipeline without a near miss",
			files: map[string]string{".kilroy/ci.dot": okDot},
			graph: "zzzzzzzz",
			want:  []string{`no pipeline "zzzzzzzz"`, "pipelines: ci"},
			check: func(t *testing.T, err error) {
				if strings.Contains(err.Error(), "did you mean") {
					t.Errorf("error suggests a pipeline for a name like none: %v", err)
				}
			},
			fix: func(*testing.T, string) string { return ".kilroy/ci.dot" },
		},
		{
			name:  "graph path not in the commit",
			files: map[string]string{".kilroy/deploy.dot": okDot},
			graph: ".kilroy/dpeloy.dot",
			want:  []string{".kilroy/dpeloy.dot is not in commit", "commit the file", `did you mean ".kilroy/deploy.dot"?`},
			fix:   func(*testing.T, string) string { return ".kilroy/deploy.dot" },
		},
		{
			name:  "graph path without its directory",
			files: map[string]string{".kilroy/deploy.dot": okDot},
			graph: "deploy.dot",
			want:  []string{"deploy.dot is not in commit", `did you mean ".kilroy/deploy.dot"?`},
			fix:   func(*testing.T, string) string { return ".kilroy/deploy.dot" },
		},
		{
			name: "graph path not committed yet, with a config that does not name it",
			files: map[string]string{
				".kilroy/config.yml": "version: 1\npipelines:\n  ci: {}\n",
				".kilroy/ci.dot":     okDot,
			},
			setup: func(t *testing.T, repo string) {
				gittest.WriteFile(t, filepath.Join(repo, "experiments/try.dot"), okDot)
			},
			graph: "experiments/try.dot",
			want:  []string{"experiments/try.dot is not in commit", "commit the file"},
			fix: func(t *testing.T, repo string) string {
				gittest.Git(t, repo, "add", "experiments/try.dot")
				gittest.Git(t, repo, "commit", "--quiet", "-m", "try")
				return "./experiments/try.dot"
			},
		},
		{
			name: "config with an unknown key",
			files: map[string]string{
				".kilroy/ci.dot":     okDot,
				".kilroy/config.yml": "version: 1\nartifact_policy:\n  verify:\n    deny_glob: [\"**/dist/**\"]\n",
			},
			want: []string{".kilroy/config.yml:4", "deny_glob"},
			fix: func(t *testing.T, repo string) string {
				gittest.CommitFiles(t, repo, "fix config", map[string]string{".kilroy/config.yml": "version: 1\n"})
				return ""
			},
		},
		{
			name: "glob doublestar rejects",
			files: map[string]string{
				".kilroy/ci.dot":     okDot,
				".kilroy/config.yml": "version: 1\nartifact_policy:\n  checkpoint:\n    exclude_globs: [\"src/[abc\"]\n",
			},
			want: []string{".kilroy/config.yml:4", "exclude_globs", "src/[abc"},
			fix: func(t *testing.T, repo string) string {
				gittest.CommitFiles(t, repo, "fix glob", map[string]string{".kilroy/config.yml": "version: 1\n"})
				return ""
			},
		},
		{
			name: "invalid pipeline",
			files: map[string]string{".kilroy/ci.dot": `digraph ci {
  exit [shape=Msquare]
  one [shape=parallelogram, tool_command="true"]
  one -> exit
}
`},
			want: []string{".kilroy/ci.dot does not validate", "kilroy-bot validate .kilroy/ci.dot"},
			check: func(t *testing.T, err error) {
				var inv *InvalidPipelineError
				if !errors.As(err, &inv) {
					t.Fatalf("error %T is not an InvalidPipelineError", err)
				}
				if !inv.Diagnostics.HasErrors() {
					t.Errorf("no error diagnostics: %v", inv.Diagnostics)
				}
				found := false
				for _, d := range inv.Diagnostics {
					found = found || d.Rule == attractor.RuleStartNode
				}
				if !found {
					t.Errorf("diagnostics %v have no %s finding", inv.Diagnostics, attractor.RuleStartNode)
				}
			},
			fix: func(t *testing.T, repo string) string {
				gittest.CommitFiles(t, repo, "fix pipeline", map[string]string{".kilroy/ci.dot": okDot})
				return ""
			},
		},
		{
			name:  "no pipeline at all",
			files: map[string]string{"README.md": "hi\n"},
			want:  []string{"has no .kilroy/*.dot pipeline", "add one"},
			fix: func(t *testing.T, repo string) string {
				gittest.CommitFiles(t, repo, "add pipeline", map[string]string{".kilroy/ci.dot": okDot})
				return ""
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.NewRepo(t, tc.files)
			if tc.setup != nil {
				tc.setup(t, repo)
			}
			before := snapshot(t, repo)
			o := localOptions(t, repo)
			o.Graph = tc.graph
			_, err := PrepareLocal(context.Background(), o)
			checkUsageError(t, err, tc.want)
			if err != nil && tc.check != nil {
				tc.check(t, err)
			}
			if diff := cmp.Diff(snapshot(t, repo), before); diff != "" {
				t.Errorf("user's repository changed (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(runBranches(t, repo), []string(nil)); diff != "" {
				t.Errorf("run branches (-got +want):\n%s", diff)
			}
			checkEmptyDir(t, o.RunDir)

			o.Graph = tc.fix(t, repo)
			p, res, err := RunLocal(context.Background(), o)
			if err != nil {
				t.Fatalf("after the fix, with the same run directory: %v", err)
			}
			if res.Status != attractor.StatusSuccess {
				t.Errorf("after the fix: run %s (%s)", res.Status, res.FailureReason)
			}
			_ = p
		})
	}
}

// TestNotARepository runs in a directory outside any repository.
func TestNotARepository(t *testing.T) {
	dir := t.TempDir()
	o := localOptions(t, dir)
	_, err := PrepareLocal(context.Background(), o)
	checkUsageError(t, err, []string{"not a git repository", dir})
	checkEmptyDir(t, o.RunDir)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the directory got %d entries", len(entries))
	}
}

// TestRunDirNotEmpty refuses a run directory that holds something: it may
// be another run's, which resume continues.
func TestRunDirNotEmpty(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline("start -> exit")})
	o := localOptions(t, repo)
	gittest.WriteFile(t, filepath.Join(o.RunDir, "checkpoint.json"), "{}")
	_, err := PrepareLocal(context.Background(), o)
	checkUsageError(t, err, []string{"is not empty", "kilroy-bot resume"})
	if got := readFile(t, filepath.Join(o.RunDir, "checkpoint.json")); got != "{}" {
		t.Errorf("checkpoint.json = %q, want it untouched", got)
	}
}

func checkUsageError(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("PrepareLocal succeeded, want a usage error")
	}
	if !errors.Is(err, ErrUsage) {
		t.Errorf("error %q does not wrap ErrUsage", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line:\n%s", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
}

// checkEmptyDir fails unless dir is missing or empty.
func checkEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("run directory %s holds %v after a refused run, want it empty", dir, names)
	}
}
