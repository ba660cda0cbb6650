package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner"
)

// The `run` and `resume` commands end to end, on real repositories made
// with the git CLI. Most cases call run in process; those that need a
// process of their own (no terminal, SIGKILL) start the test binary as
// kilroy-bot (see TestMain).

// dotFor is a pipeline with body between start and exit.
func dotFor(body string) string {
	return "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n" + body + "\n}\n"
}

func dotQuote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// gitT runs the test's own git in dir, isolated from the machine's config.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	cmd.Env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

// newRepo makes a repository whose one commit holds files.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := filepath.Join(t.TempDir(), "repo")
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, dir, "init", "--quiet", "--initial-branch=main")
	gitT(t, dir, "add", "--all")
	gitT(t, dir, "commit", "--quiet", "-m", "initial")
	return dir
}

// runBranchFiles lists the files at the tip of the repository's one run
// branch.
func runBranchFiles(t *testing.T, repo string) []string {
	t.Helper()
	branches := gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/")
	if branches == "" || strings.Contains(branches, "\n") {
		t.Fatalf("want one run branch, have %q", branches)
	}
	return strings.Split(gitT(t, repo, "ls-tree", "-r", "--name-only", branches), "\n")
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunCommand(t *testing.T) {
	passing := dotFor(`
  build [shape=parallelogram, tool_command="echo built > built.txt"]
  check [shape=octagon, command="test -f built.txt"]
  start -> build -> check -> exit`)
	failing := dotFor(`
  build [shape=parallelogram, tool_command="echo built > built.txt"]
  check [shape=octagon, command=` + dotQuote(`echo "main.go:3:1: something is broken" >&2; exit 1`) + `]
  start -> build -> check -> exit`)
	for _, tc := range []struct {
		name       string
		files      map[string]string // nil: not a repository
		noCommit   bool              // a repository without commits (files unused)
		args       []string          // after run --repo R --run-dir D
		stage      bool              // stage a change before the run
		wantCode   int
		wantStdout []string
		wantStderr []string
		notStderr  []string // internals a user should not have to read
	}{
		{
			name:       "passing pipeline",
			files:      map[string]string{".kilroy/ci.dot": passing},
			wantCode:   0,
			wantStdout: []string{"`build`", "`check`", "✅ success"},
			wantStderr: []string{"kilroy: run ", "run branch kilroy/run/ci/"},
		},
		{
			name:       "failing pipeline",
			files:      map[string]string{".kilroy/ci.dot": failing},
			wantCode:   1,
			wantStdout: []string{"❌ `check`", "something is broken"},
			wantStderr: []string{"verify command exited with status 1"},
		},
		{
			name:       "pipeline by path",
			files:      map[string]string{".kilroy/ci.dot": failing, ".kilroy/ok.dot": passing},
			args:       []string{"--graph", ".kilroy/ok.dot"},
			wantCode:   0,
			wantStderr: []string{"kilroy/run/ok/"},
		},
		{
			name: "pipeline by path that config.yml does not name",
			files: map[string]string{
				".kilroy/config.yml":  "version: 1\npipelines:\n  ci: {}\n",
				".kilroy/ci.dot":      failing,
				"experiments/try.dot": passing,
			},
			args:       []string{"--graph", "experiments/try.dot"},
			wantCode:   0,
			wantStderr: []string{"kilroy/run/try/"},
		},
		{
			name: "pipeline with a warning",
			files: map[string]string{".kilroy/ci.dot": dotFor(`
  build [shape=parallelogram, tool_command="true", timeout=600]
  start -> build -> exit`)},
			wantCode:   0,
			wantStderr: []string{`.kilroy/ci.dot:5:`, `warning: timeout=600 has no unit`, "[duration_unit]"},
		},
		{
			name:       "dirty index",
			files:      map[string]string{".kilroy/ci.dot": passing},
			args:       []string{"--graph", "ci"},
			stage:      true,
			wantCode:   2,
			wantStderr: []string{"has staged changes that HEAD does not include"},
		},
		{
			name:       "unknown flag",
			files:      map[string]string{".kilroy/ci.dot": passing},
			args:       []string{"--bogus"},
			wantCode:   2,
			wantStderr: []string{"flag provided but not defined: -bogus"},
		},
		{
			name:       "stray argument",
			files:      map[string]string{".kilroy/ci.dot": passing},
			args:       []string{"ci"},
			wantCode:   2,
			wantStderr: []string{`unexpected argument "ci": pass the pipeline with --graph`},
		},
		{
			name:       "not a repository",
			wantCode:   2,
			wantStderr: []string{"not a git repository"},
		},
		{
			name:       "repository without a commit",
			noCommit:   true,
			wantCode:   2,
			wantStderr: []string{"has no commit yet", "commit your files first"},
			notStderr:  []string{"gitops", "rev-parse", "exit 1"},
		},
		{
			name:       "unknown pipeline",
			files:      map[string]string{".kilroy/ci.dot": passing, ".kilroy/deploy.dot": passing},
			args:       []string{"--graph", "deplyo"},
			wantCode:   2,
			wantStderr: []string{`no pipeline "deplyo"`, `did you mean "deploy"?`},
		},
		{
			name:       "invalid pipeline",
			files:      map[string]string{".kilroy/ci.dot": "digraph ci {\n  exit [shape=Msquare]\n}\n"},
			wantCode:   2,
			wantStderr: []string{".kilroy/ci.dot:", "start_node", "kilroy-bot validate .kilroy/ci.dot"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			if tc.files != nil {
				repo = newRepo(t, tc.files)
			}
			if tc.noCommit {
				gitT(t, repo, "init", "--quiet")
			}
			if tc.stage {
				if err := os.WriteFile(filepath.Join(repo, "staged.txt"), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				gitT(t, repo, "add", "staged.txt")
			}
			runDir := filepath.Join(t.TempDir(), "run")
			args := append([]string{"run", "--repo", repo, "--run-dir", runDir}, tc.args...)
			code, stdout, stderr := runCmd(args...)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, tc.wantCode, stderr)
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout does not say %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			for _, w := range tc.notStderr {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr says %q:\n%s", w, stderr)
				}
			}
			if tc.wantCode == 2 {
				if stdout != "" {
					t.Errorf("usage error printed a report:\n%s", stdout)
				}
				return
			}
			report, err := os.ReadFile(filepath.Join(runDir, "report.md"))
			if err != nil {
				t.Fatalf("report.md: %v", err)
			}
			if string(report) != stdout {
				t.Errorf("report.md differs from stdout:\n%s", cmp.Diff(string(report), stdout))
			}
			// Live progress: one line per finished node with its status
			// and duration.
			if !regexp.MustCompile(`(?m)^  build +success +[0-9.]+m?s$`).MatchString(stderr) {
				t.Errorf("stderr has no progress line for build:\n%s", stderr)
			}
		})
	}
}

// TestRunAnswer routes a human gate with --answer NODE=LABEL.
func TestRunAnswer(t *testing.T) {
	dot := dotFor(`
  gate [shape=hexagon, label="Ship it?"]
  ship [shape=parallelogram, tool_command="echo > shipped.txt"]
  fix [shape=parallelogram, tool_command="echo > fixed.txt"]
  start -> gate
  gate -> ship [label="[A] Approve"]
  gate -> fix [label="[R] Request changes"]
  ship -> exit
  fix -> exit`)
	for _, tc := range []struct {
		flag []string
		want string
	}{
		{[]string{"--answer", "gate=Approve"}, "shipped.txt"},
		{[]string{"--answer", "gate=r"}, "fixed.txt"},
		{[]string{"--yes"}, "shipped.txt"}, // the first choice
	} {
		t.Run(strings.Join(tc.flag, " "), func(t *testing.T) {
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": dot})
			args := append([]string{"run", "--repo", repo, "--run-dir", filepath.Join(t.TempDir(), "run")}, tc.flag...)
			code, _, stderr := runCmd(args...)
			if code != 0 {
				t.Fatalf("exit code %d, want 0\n%s", code, stderr)
			}
			if diff := cmp.Diff(runBranchFiles(t, repo), []string{".kilroy/ci.dot", tc.want}); diff != "" {
				t.Errorf("run branch files (-got +want):\n%s", diff)
			}
		})
	}
	// Answers the pipeline cannot use are refused before anything runs.
	for _, tc := range []struct {
		answer string
		want   []string
	}{
		{"nosuch=yes", []string{`--answer nosuch=yes: pipeline ci has no node "nosuch" (human gates: gate)`}},
		{"gaet=Approve", []string{`did you mean "gate"?`}},
		{"ship=Approve", []string{`node "ship" is not a human gate`}},
		{"gate=aprove", []string{"gate gate offers [A] Approve, [R] Request changes", `did you mean "approve"?`}},
	} {
		t.Run("refused "+tc.answer, func(t *testing.T) {
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": dot})
			code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", filepath.Join(t.TempDir(), "run"), "--answer", tc.answer)
			if code != 2 || stdout != "" {
				t.Errorf("exit code %d, stdout %q; want 2 and no report\n%s", code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, " started") {
				t.Errorf("a node started:\n%s", stderr)
			}
			if got := gitT(t, repo, "branch", "--list", "kilroy/*"); got != "" {
				t.Errorf("run branches left: %s", got)
			}
		})
	}
	t.Run("malformed", func(t *testing.T) {
		repo := newRepo(t, map[string]string{".kilroy/ci.dot": dot})
		code, _, stderr := runCmd("run", "--repo", repo, "--run-dir", filepath.Join(t.TempDir(), "run"), "--answer", "gate")
		if code != 2 || !strings.Contains(stderr, `want NODE=LABEL, got "gate"`) {
			t.Errorf("exit code %d, stderr %q; want 2 and the expected form", code, stderr)
		}
	})
	// Without an answer and without a terminal the gate fails, saying how
	// to answer it. A process of its own, so its stdin is surely no terminal.
	t.Run("unanswered", func(t *testing.T) {
		repo := newRepo(t, map[string]string{".kilroy/ci.dot": dot})
		code, _, stderr := kilroyBot(t, "run", "--repo", repo, "--run-dir", filepath.Join(t.TempDir(), "run"))
		if code != 1 || !strings.Contains(stderr, "pass --answer gate=LABEL or --yes") {
			t.Errorf("exit code %d, want 1, and stderr saying how to answer:\n%s", code, stderr)
		}
	})
}

// kilroyBot runs the test binary as the kilroy-bot command in a process of
// its own. code is -1 when a signal ended it.
func kilroyBot(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), beKilroyBot+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A node process outliving a killed kilroy-bot must not keep the test
	// waiting for its pipes.
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("kilroy-bot %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestResumeAfterSIGKILL: a run killed with SIGKILL between nodes resumes
// without redoing checkpointed nodes. The second node kills kilroy-bot (its
// parent process) the first time it runs; `resume RUN_DIR` in a new
// process finishes the run, and the first node's side effect shows it ran
// once.
func TestResumeAfterSIGKILL(t *testing.T) {
	outside := t.TempDir() // not in the worktree: survives the kill and the resume
	counter := filepath.Join(outside, "one.count")
	marker := filepath.Join(outside, "killed")
	killOnce := "if [ ! -e " + marker + " ]; then touch " + marker + "; kill -9 $PPID; exit 0; fi; echo k > k.txt"
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(`
  one [shape=parallelogram, tool_command=` + dotQuote("echo ran >> "+counter+" && echo one > one.txt") + `]
  killer [shape=parallelogram, tool_command=` + dotQuote(killOnce) + `]
  two [shape=parallelogram, tool_command="test -f one.txt && test -f k.txt && echo two > two.txt"]
  start -> one -> killer -> two -> exit`)})
	head := gitT(t, repo, "rev-parse", "HEAD")
	runDir := filepath.Join(t.TempDir(), "run")

	// --no-sandbox: the killer node kills kilroy-bot itself, which no node
	// can do inside the sandbox (TestRunSandboxAttacks).
	code, _, stderr := kilroyBot(t, "run", "--no-sandbox", "--repo", repo, "--run-dir", runDir)
	if code != -1 {
		t.Fatalf("first run exited %d, want killed by a signal\nstderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the killer node did not run: %v", err)
	}
	cp, err := runner.ReadCheckpoint(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp.State.Completed, []string{"start", "one"}); diff != "" {
		t.Fatalf("checkpointed nodes at the kill (-got +want):\n%s", diff)
	}
	// What the report of the resumed run must show for node one, which
	// only the interrupted run heard.
	oneMS := int64(-1)
	progress, err := os.ReadFile(filepath.Join(runDir, "progress.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(progress)) {
		var ev struct {
			Type       string `json:"type"`
			Node       string `json:"node"`
			DurationMS int64  `json:"duration_ms"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "node_finished" && ev.Node == "one" {
			oneMS = ev.DurationMS
		}
	}
	if oneMS < 0 {
		t.Fatalf("progress.ndjson has no node_finished of one:\n%s", progress)
	}
	oneDuration := "—"
	if oneMS > 0 {
		oneDuration = fmt.Sprintf("%.1fs", (time.Duration(oneMS) * time.Millisecond).Seconds())
	}

	code, stdout, stderr := kilroyBot(t, "resume", "--no-sandbox", runDir)
	if code != 0 {
		t.Fatalf("resume exited %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if got, err := os.ReadFile(counter); err != nil || string(got) != "ran\n" {
		t.Errorf("node one's counter = %q (%v), want it to have run once", got, err)
	}
	branch := gitT(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy/")
	nodes := gitT(t, repo, "log", "--reverse", "--format=%(trailers:key=Kilroy-Node,valueonly)", head+".."+branch)
	if diff := cmp.Diff(strings.Fields(nodes), []string{"start", "one", "killer", "two", "exit"}); diff != "" {
		t.Errorf("checkpointed nodes on %s (-got +want):\n%s", branch, diff)
	}
	if diff := cmp.Diff(runBranchFiles(t, repo), []string{".kilroy/ci.dot", "k.txt", "one.txt", "two.txt"}); diff != "" {
		t.Errorf("run branch files (-got +want):\n%s", diff)
	}
	if !strings.Contains(stdout, "`two`") {
		t.Errorf("resumed run's report does not show node two:\n%s", stdout)
	}
	// Node one ran before the kill: its row has its attempt, duration and
	// checkpoint from the interrupted run, not dashes.
	wantOne := "| `one` | tool | ✅ success | 1 | " + oneDuration + " | `" + cp.CommitSHA[:7] + "` |"
	if !strings.Contains(stdout, wantOne+"\n") {
		t.Errorf("resumed run's report lacks the row\n%s\nreport:\n%s", wantOne, stdout)
	}
	if want := "| `killer` | tool | ✅ success | 1 | "; !strings.Contains(stdout, want) {
		t.Errorf("resumed run's report shows killer's interrupted attempt; want one attempt:\n%s", stdout)
	}
	if got := gitT(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left after the resumed run:\n%s", got)
	}
}
