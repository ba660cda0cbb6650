package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// TestCheckArtifactsGitFailureIsTransient: when git cannot list what the
// run changed, verify.artifacts cannot judge anything, so the node is
// retried as an infrastructure problem instead of passing or failing.
func TestCheckArtifactsGitFailureIsTransient(t *testing.T) {
	dir := t.TempDir()
	g, err := gitops.New(gitops.Options{PATH: os.Getenv("PATH"), HomeDir: filepath.Join(dir, "home")})
	if err != nil {
		t.Fatal(err)
	}
	notARepo := filepath.Join(dir, "worktree")
	if err := os.Mkdir(notARepo, 0o755); err != nil {
		t.Fatal(err)
	}
	h := &nodeHost{git: g, worktree: notARepo, baseSHA: strings.Repeat("0", 40), policy: &policy.Resolved{}}
	o, err := h.CheckArtifacts(context.Background(), attractor.ArtifactCheckRequest{Node: &attractor.Node{ID: "artifacts"}})
	if err != nil {
		t.Fatalf("CheckArtifacts: %v", err)
	}
	if o.Status != attractor.StatusRetry || o.FailureClass != attractor.ClassTransientInfra {
		t.Errorf("outcome %s/%s (%s), want retry/transient_infra", o.Status, o.FailureClass, o.FailureReason)
	}
	if !strings.Contains(o.FailureReason, "could not list the run's changed files") {
		t.Errorf("reason %q does not say what failed", o.FailureReason)
	}
}
