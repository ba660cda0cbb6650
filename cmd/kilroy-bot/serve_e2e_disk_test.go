package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallDataDir mounts a tmpfs of inodes inodes as a data dir, for the
// length of the test; it skips the test where it may not mount.
func smallDataDir(t *testing.T, inodes int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=256m,nr_inodes=%d,mode=0700", inodes)); err != nil {
		t.Skipf("cannot mount a small filesystem for the data dir (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount the data dir: %v", err)
		}
	})
	return dir
}

func freeInodes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Ffree)
}

// TestServeE2EDiskReserve: on a data dir of 60,000 inodes with
// sandbox.disk.reserve_inodes 20,000 (room for what the node writes while
// it is being stopped, thousands of files under -race), a node that creates files in
// node_modules/ until it cannot (then waits) is stopped when the
// filesystem falls below the reserve, its check saying so and naming the
// setting (the engine reports the stop as a cancellation with that cause); another organisation's pull request, opened after that, is
// fetched, checked out and run to success.
func TestServeE2EDiskReserve(t *testing.T) {
	gate := newGate(t)
	data := smallDataDir(t, 60_000)
	fill := fmt.Sprintf(`mkdir -p node_modules && i=0 && while [ $i -lt 100000 ] && : > node_modules/f$i 2>/dev/null; do i=$((i+1)); done; `+
		`while [ ! -e %s ]; do sleep 0.05; done`, gate)
	pipeline := fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  fill [shape=parallelogram, tool_command=%q]
  done [shape=Msquare]
  start -> fill -> done
}
`, fill)
	e := newE2E(t, e2eOptions{dataDir: data, files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": pipeline},
		policy: fmt.Sprintf("sandbox:\n  read_only: [%s]\n  disk: {reserve_inodes: 20000, reserve_bytes: 0}\n", gateRoot())})
	big := e2eTenant{owner: e2eOwner, name: e2eName, id: e2eRepoID, repo: e.repo}
	e.openTenantPR(big, 1)
	e.waitFor("the filling run to be stopped, or the data dir to fill", func() bool {
		s := e.summaries(big)
		return len(s) == 1 && allCompleted(s) || freeInodes(t, data) < 500
	})
	t.Logf("%d inodes free on the data dir", freeInodes(t, data))

	other := e.addTenant("acme", "gadgets", 9001, map[string]string{"main.go": mainGo, ".kilroy/ci.dot": sleepDOT(0)})
	e.openTenantPR(other, 1)
	e.waitFor("acme/gadgets' run to complete", func() bool {
		s := e.summaries(other)
		return len(s) == 1 && allCompleted(s)
	})
	if c := e.summaries(other)[0]; c.Conclusion != "success" {
		t.Errorf("acme/gadgets' run concluded %s, want success: %s\n%s", c.Conclusion, c.Title, c.Summary)
	}
	c := e.summaries(big)[0]
	want := "below its reserve of 20000 (server policy sandbox.disk.reserve_inodes)"
	shown := strings.ReplaceAll(c.Summary+c.Text, `\_`, "_") // markdown escapes
	if c.Status != "completed" || c.Conclusion != "failure" && c.Conclusion != "cancelled" || !strings.Contains(shown, want) {
		t.Errorf("the filling run: %s/%s %s\n%s\nwant it stopped, saying %q", c.Status, c.Conclusion, c.Title, c.Summary, want)
	}
	touch(t, gate)
	e.waitFor("every run to complete", func() bool { return allCompleted(e.summaries(big)) })
	e.waitIdle()
}

// TestServeE2ENoDataDirInChecks: a node that makes an empty repository in
// its worktree fails the checkpoint after it (git update-index cannot add
// it), and git's error names the worktree; the data dir's path appears in
// no check run GitHub gets.
func TestServeE2ENoDataDirInChecks(t *testing.T) {
	const pipeline = `digraph ci {
  start [shape=Mdiamond]
  break [shape=parallelogram, tool_command="git init -q sub"]
  done [shape=Msquare]
  start -> break -> done
}
`
	e := newE2E(t, e2eOptions{files: map[string]string{"main.go": mainGo, ".kilroy/ci.dot": pipeline}})
	sha := e.repo.Commit(t, "feature-60", map[string]string{"README.md": "hi\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 60, sha: sha, files: []string{"README.md"}}))
	runs := e.waitSettled(sha, "kilroy/ci")
	e.waitIdle()
	if runs[0].Conclusion == "success" {
		t.Fatalf("the run whose checkpoint failed succeeded: %s", runs[0].Summary)
	}
	dirs := []string{e.cfg.DataDir}
	if real, err := filepath.EvalSymlinks(e.cfg.DataDir); err == nil {
		dirs = append(dirs, real)
	}
	for _, r := range e.checkRuns(sha) {
		for _, d := range dirs {
			if text := r.Title + r.Summary + r.Text; strings.Contains(text, d) {
				t.Errorf("check %s shows the data dir %s:\n%s", r.Name, d, text)
			}
		}
	}
}
