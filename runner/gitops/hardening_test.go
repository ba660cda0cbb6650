package gitops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hookScript records that it ran and fails, so a hook that runs both
// leaves a trace and breaks the operation.
func hookScript(marker string) string {
	return "#!/bin/sh\necho ran >> '" + marker + "'\nexit 1\n"
}

func TestHardenedInvocationIgnoresHooksFsmonitorAndUserConfig(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	marker := filepath.Join(t.TempDir(), "ran")

	hooksDirs := []string{filepath.Join(repo, ".git", "hooks"), filepath.Join(repo, "myhooks")}
	for _, dir := range hooksDirs {
		for _, hook := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "reference-transaction", "pre-merge-commit"} {
			p := filepath.Join(dir, hook)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(hookScript(marker)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	fsmonitor := filepath.Join(t.TempDir(), "fsmonitor")
	if err := os.WriteFile(fsmonitor, []byte(hookScript(marker)), 0o755); err != nil {
		t.Fatal(err)
	}
	mustGit(t, g, repo, "config", "core.hooksPath", hooksDirs[1])
	mustGit(t, g, repo, "config", "core.fsmonitor", fsmonitor)
	mustGit(t, g, repo, "config", "commit.gpgSign", "true")
	// The bot's HOME has a global config that would break commits; it must
	// not be read.
	writeFile(t, g.home, ".gitconfig", "[user]\n\tname = Global User\n[commit]\n\tgpgSign = true\n[core]\n\tfsmonitor = "+fsmonitor+"\n")

	wt, branch, _ := newRun(t, g, repo)
	writeFile(t, wt, "b.txt", "b\n")
	res, err := g.Checkpoint(ctx, wt, spec(branch, "n"))
	if err != nil {
		t.Fatalf("checkpoint with hostile hooks and config: %v", err)
	}
	if _, err := g.MergeBranches(ctx, wt, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a hook or fsmonitor ran: %q", b)
	}
	if who := mustGit(t, g, wt, "log", "-1", "--format=%an", res.SHA); who != BotName {
		t.Errorf("author %q, want %q (global config must be ignored)", who, BotName)
	}
}

func TestRepoIdentityUsesRepositoryConfigOnly(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t, func(o *Options) { o.RepoIdentity = true })
	writeFile(t, g.home, ".gitconfig", "[user]\n\tname = Global User\n\temail = global@example.com\n")
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)

	res, err := g.Checkpoint(ctx, wt, spec(branch, "one"))
	if err != nil {
		t.Fatal(err)
	}
	bot := BotName + " <" + BotEmail + ">"
	if who := mustGit(t, g, wt, "log", "-1", "--format=%an <%ae>", res.SHA); who != bot {
		t.Errorf("without repository identity: author %q, want %q", who, bot)
	}

	// The identity is read once per run worktree: a run keeps the author it
	// started with, the next run takes the new one.
	mustGit(t, g, repo, "config", "user.name", "Ada Local")
	mustGit(t, g, repo, "config", "user.email", "ada@example.com")
	res, err = g.Checkpoint(ctx, wt, spec(branch, "two"))
	if err != nil {
		t.Fatal(err)
	}
	if who := mustGit(t, g, wt, "log", "-1", "--format=%an <%ae>", res.SHA); who != bot {
		t.Errorf("same run after a config change: author %q, want the run's first %q", who, bot)
	}
	if err := g.RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatal(err)
	}
	wt2 := filepath.Join(t.TempDir(), "wt2")
	if err := g.AddWorktree(ctx, repo, wt2, RunBranch("ci", "r2"), res.SHA); err != nil {
		t.Fatal(err)
	}
	res, err = g.Checkpoint(ctx, wt2, spec(RunBranch("ci", "r2"), "one"))
	if err != nil {
		t.Fatal(err)
	}
	if who := mustGit(t, g, wt2, "log", "-1", "--format=%an <%ae>|%cn <%ce>", res.SHA); who != "Ada Local <ada@example.com>|"+bot {
		t.Errorf("with repository identity: %q, want author Ada and committer the bot", who)
	}
}

func TestErrorCarriesArgvAndStderr(t *testing.T) {
	g := newTestGit(t)
	dir := t.TempDir()
	_, err := g.run(context.Background(), call{dir: dir, args: []string{"rev-parse", "--verify", "no-such-ref"}})
	gerr, ok := err.(*Error)
	if !ok {
		t.Fatalf("err = %T %v, want *Error", err, err)
	}
	if gerr.ExitCode == 0 || gerr.Dir != dir || gerr.Argv[len(gerr.Argv)-1] != "no-such-ref" {
		t.Errorf("error fields: %+v", gerr)
	}
	msg := err.Error()
	if !strings.Contains(msg, "git rev-parse --verify no-such-ref") || !strings.Contains(msg, "not a git repository") {
		t.Errorf("message %q lacks argv or stderr", msg)
	}
	if strings.Contains(msg, "core.hooksPath") {
		t.Errorf("message %q repeats the hardening options", msg)
	}
}

func TestCanceledContext(t *testing.T) {
	g := newTestGit(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.RepoRoot(ctx, t.TempDir()); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCapStderrAndRedact(t *testing.T) {
	long := strings.Repeat("x", 10000) + "fatal: the end"
	got := capStderr(long)
	if len(got) > maxStderr+len("…") || !strings.HasSuffix(got, "fatal: the end") {
		t.Errorf("capStderr kept %d bytes ending %q", len(got), got[len(got)-20:])
	}
	if got := redact("auth ghs_abc failed for ghs_abc", []string{"ghs_abc", ""}); got != "auth [REDACTED] failed for [REDACTED]" {
		t.Errorf("redact = %q", got)
	}
}
