package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue"
)

// TestGCCommand: a local run leaves its directory and run branch; gc keeps
// them while they are new, names them in a dry run once they are old, and
// then removes both.
func TestGCCommand(t *testing.T) {
	repo := newRepo(t, map[string]string{".kilroy/ci.dot": dotFor(`
  build [shape=parallelogram, tool_command="echo built > built.txt"]
  start -> build -> exit`)})
	dataDir := filepath.Join(t.TempDir(), "data")
	if code, _, stderr := runCmd("run", "--repo", repo, "--data-dir", dataDir, "--no-sandbox"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	runs, err := os.ReadDir(filepath.Join(dataDir, "runs"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %v; want one run directory", runs, err)
	}
	id := runs[0].Name()
	runDir := filepath.Join(dataDir, "runs", id)
	branches := func() string {
		out, err := exec.Command("git", "-C", repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/kilroy").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if b := branches(); b != "kilroy/run/ci/"+id {
		t.Fatalf("run branches %q, want kilroy/run/ci/%s", b, id)
	}

	code, stdout, stderr := runCmd("gc", "--data-dir", dataDir, "--repo", repo)
	if code != 0 || !strings.Contains(stdout, "removed 0 runs, kept 1") {
		t.Errorf("gc of a new run: exit %d, stdout %q, stderr %q; want it kept", code, stdout, stderr)
	}

	old := time.Now().Add(-20 * 24 * time.Hour)
	if err := filepath.WalkDir(runDir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCmd("gc", "--data-dir", dataDir, "--dry-run")
	if want := "would remove " + id + " (unchanged for 20d): run directory " + runDir + ", branch kilroy/run/ci/" + id; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("gc --dry-run: exit %d, stdout:\n%s\nwant a line %q", code, stdout, want)
	}
	if _, err := os.Stat(runDir); err != nil || branches() == "" {
		t.Fatalf("gc --dry-run removed something: %v, branches %q", err, branches())
	}

	code, stdout, stderr = runCmd("gc", "--data-dir", dataDir, "--repo", repo, "--older-than", "14d")
	if code != 0 || !strings.Contains(stdout, "removed "+id) || !strings.Contains(stdout, "removed 1 runs, kept 0") {
		t.Errorf("gc: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("run directory still there: %v", err)
	}
	if b := branches(); b != "" {
		t.Errorf("run branch still there: %q", b)
	}
}

func TestGCUsage(t *testing.T) {
	for _, args := range [][]string{{"--older-than", "two weeks"}, {"--older-than", "0"}, {"extra"}, {"--repo", "/"}} {
		code, _, stderr := runCmd(append([]string{"gc", "--data-dir", t.TempDir()}, args...)...)
		if code != 2 || !strings.Contains(stderr, "kilroy-bot gc: ") {
			t.Errorf("gc %q: exit %d, stderr %q; want 2 and the problem", args, code, stderr)
		}
	}
}

// TestGCServerDataDir: on a server's data dir gc sweeps by retention and
// asks the server's queue: an old run directory the queue has no active
// run for goes, an old one of a queued run stays; --dry-run lists the one
// and removes nothing.
func TestGCServerDataDir(t *testing.T) {
	dataDir := t.TempDir()
	q, err := queue.Open(context.Background(), queue.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := q.EnqueueDelivery(context.Background(), queue.Delivery{ID: "d-1", Event: "pull_request"}, []queue.RunArgs{{
		InstallationID: 1, Repo: "octo/widgets", CloneURL: "https://github.com/octo/widgets.git", PR: 1,
		HeadSHA: strings.Repeat("a", 40), BaseRef: "main", Pipeline: "ci", Trigger: queue.TriggerPullRequest}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	queued, finished := res.Jobs[0].RunID, queue.NewRunID()
	oldRunDirs(t, dataDir, queued, finished)
	code, stdout, stderr := runCmd("gc", "--data-dir", dataDir, "--dry-run")
	if code != 0 || !strings.Contains(stdout, "would remove run directory "+finished) || strings.Contains(stdout, queued) {
		t.Errorf("gc --dry-run: exit %d, stdout %q, stderr %q; want %s listed and %s not", code, stdout, stderr, finished, queued)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "runs", finished)); err != nil {
		t.Errorf("gc --dry-run removed the finished run's directory: %v", err)
	}
	code, stdout, stderr = runCmd("gc", "--data-dir", dataDir)
	if code != 0 || !strings.Contains(stdout, "removed run directory "+finished) || strings.Contains(stdout, queued) {
		t.Errorf("gc: exit %d, stdout %q, stderr %q; want %s removed and %s kept", code, stdout, stderr, finished, queued)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "runs", queued)); err != nil {
		t.Errorf("the queued run's directory: %v", err)
	}
	if code, _, stderr := runCmd("gc", "--data-dir", dataDir, "--repo", dataDir); code != 2 || !strings.Contains(stderr, "server's data dir") {
		t.Errorf("gc --repo on a server's data dir: exit %d, %q; want a usage error", code, stderr)
	}
}

// oldRunDirs makes run directories in a server's data dir that nothing
// changed in for 20 days.
func oldRunDirs(t *testing.T, dataDir string, ids ...string) {
	t.Helper()
	old := time.Now().Add(-20 * 24 * time.Hour)
	for _, id := range ids {
		dir := filepath.Join(dataDir, "runs", id)
		if err := os.MkdirAll(filepath.Join(dir, "nodes", "build"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(dir, "nodes", "build"), filepath.Join(dir, "nodes"), dir} {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
}
