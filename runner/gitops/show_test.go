package gitops

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFileAtLimit(t *testing.T) {
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"small.dot": "digraph g {}\n", "big.dot": strings.Repeat("x", 5000)})
	ctx := t.Context()
	got, err := g.ReadFileAt(ctx, repo, "HEAD", "small.dot", 4096)
	if err != nil || string(got) != "digraph g {}\n" {
		t.Errorf("small.dot: %q, %v", got, err)
	}
	_, err = g.ReadFileAt(ctx, repo, "HEAD", "big.dot", 4096)
	tl, ok := errors.AsType[*TooLargeError](err)
	if !ok {
		t.Fatalf("big.dot: %v, want a *TooLargeError", err)
	}
	if diff := cmp.Diff(*tl, TooLargeError{Name: "big.dot", Size: 5000, Max: 4096}); diff != "" {
		t.Errorf("error (-got +want):\n%s", diff)
	}
	if _, err := g.ReadFileAt(ctx, repo, "HEAD", "missing.dot", 4096); !errors.Is(err, ErrNotInCommit) {
		t.Errorf("missing.dot: %v, want ErrNotInCommit", err)
	}
}
