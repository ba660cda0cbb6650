package gitops

import (
	"context"
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// dirSize is the bytes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRetentionOfARunBranch: a run branch holding a large file, in a
// mirror and pushed to its remote, is listed in both, deleted in both
// (twice: a second sweep finds nothing to do), and after CollectMirror the
// mirror is back to about its size before the run.
func TestRetentionOfARunBranch(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	src := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	_, remoteURL := newBareRemote(t, g)
	mirror := filepath.Join(t.TempDir(), "mirrors", "o", "r.git")
	if err := g.EnsureMirror(ctx, mirror, "file://"+src); err != nil {
		t.Fatal(err)
	}
	if err := g.Fetch(ctx, mirror, "file://"+src); err != nil {
		t.Fatal(err)
	}
	if err := g.CollectMirror(ctx, mirror, 0); err != nil {
		t.Fatal(err)
	}
	before := dirSize(t, mirror)
	head, _ := g.HeadSHA(ctx, src)

	branch := RunBranch("ci", "01J0000000000000000000000A")
	wt := filepath.Join(t.TempDir(), "wt")
	if err := g.AddWorktree(ctx, mirror, wt, branch, head); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 8<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "artifact.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := g.Checkpoint(ctx, wt, spec(branch, "build"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Push(ctx, mirror, remoteURL, branch); err != nil {
		t.Fatal(err)
	}

	local, err := g.RunBranches(ctx, mirror)
	if err != nil {
		t.Fatal(err)
	}
	if len(local) != 1 || local[0].Branch != branch || local[0].SHA != res.SHA || time.Since(local[0].Committed) > time.Hour {
		t.Errorf("RunBranches = %+v, want %s at %s committed just now", local, branch, res.SHA)
	}
	remote, err := g.RemoteRunBranches(ctx, mirror, remoteURL)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(remote, []RunBranchRef{{Branch: branch, SHA: res.SHA}}); diff != "" {
		t.Errorf("RemoteRunBranches (-got +want):\n%s", diff)
	}
	trees, err := g.LinkedWorktrees(ctx, mirror)
	if err != nil || len(trees) != 1 || canonicalPath(trees[0]) != canonicalPath(wt) {
		t.Errorf("LinkedWorktrees = %v, %v; want [%s]", trees, err, wt)
	}

	if err := g.DeleteRemoteRunBranch(ctx, mirror, remoteURL, "main", head); err == nil {
		t.Error("DeleteRemoteRunBranch deleted a branch outside the bot's namespace")
	}
	for range 2 {
		if err := g.DeleteRemoteRunBranch(ctx, mirror, remoteURL, branch, res.SHA); err != nil {
			t.Fatal(err)
		}
	}
	if remote, err := g.RemoteRunBranches(ctx, mirror, remoteURL); err != nil || len(remote) != 0 {
		t.Errorf("remote run branches after the delete: %+v, %v", remote, err)
	}

	if err := g.RemoveWorktree(ctx, mirror, wt); err != nil {
		t.Fatal(err)
	}
	if ok, err := g.DeleteRunBranch(ctx, mirror, branch); err != nil || !ok {
		t.Fatalf("DeleteRunBranch = %v, %v", ok, err)
	}
	if trees, err := g.LinkedWorktrees(ctx, mirror); err != nil || len(trees) != 0 {
		t.Errorf("LinkedWorktrees after removal = %v, %v", trees, err)
	}
	full := dirSize(t, mirror)
	if err := g.CollectMirror(ctx, mirror, 0); err != nil {
		t.Fatal(err)
	}
	after := dirSize(t, mirror)
	t.Logf("mirror: %d bytes before the run, %d with the deleted branch's objects, %d after CollectMirror", before, full, after)
	if full-before < 8<<20 || after-before > 1<<20 {
		t.Errorf("mirror sizes: %d before, %d with the artifact, %d after; want the 8 MiB artifact gone", before, full, after)
	}
}
