package gitops

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckpointRefusesFileOverGitHubLimit: a node that writes a 120 MiB
// file fails its checkpoint with the path and size, before anything is
// staged; the same file left out by the exclude globs is no problem.
func TestCheckpointRefusesFileOverGitHubLimit(t *testing.T) {
	ctx := t.Context()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	sparse := func(rel string, size int64) {
		writeFile(t, wt, rel, "")
		if err := os.Truncate(filepath.Join(wt, filepath.FromSlash(rel)), size); err != nil { // no disk used
			t.Fatal(err)
		}
	}
	sparse("node_modules/huge.bin", 120<<20)
	if _, err := g.Checkpoint(ctx, wt, spec(branch, "excluded")); err != nil {
		t.Fatalf("a large excluded file: %v", err)
	}
	tip := mustGit(t, g, wt, "rev-parse", "HEAD")

	writeFile(t, wt, "small.txt", "small\n")
	sparse("out/big.bin", 120<<20)
	_, err := g.Checkpoint(ctx, wt, spec(branch, "build"))
	tl, ok := errors.AsType[*FileTooLargeError](err)
	if !ok {
		t.Fatalf("Checkpoint: %v, want a *FileTooLargeError", err)
	}
	if diff := cmp.Diff(*tl, FileTooLargeError{Path: "out/big.bin", Size: 120 << 20}); diff != "" {
		t.Errorf("error (-got +want):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "out/big.bin is 125829120 bytes (120.0 MiB), over GitHub's 100 MiB limit") {
		t.Errorf("message %q does not give the path and size", err)
	}
	if got := mustGit(t, g, wt, "rev-parse", "HEAD"); got != tip {
		t.Errorf("the branch moved to %s; want it at %s", got, tip)
	}
	if staged := mustGit(t, g, wt, "diff", "--cached", "--name-only"); staged != "" {
		t.Errorf("staged %q after the refused checkpoint", staged)
	}
}
