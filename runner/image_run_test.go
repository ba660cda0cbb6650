package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/image"
)

// Choose: --image over the pipeline's image: over the repository's over
// the default; under a server's images.allow a repository's choice must
// match (its default need not), and a refusal is a usage error at the
// key's line naming the patterns.
func TestImageChoose(t *testing.T) {
	cfg, err := policy.ParseRepoConfig(ConfigPath, []byte("version: 1\nimage: golang:1.23\npipelines:\n"+
		"  ci: {}\n  lint:\n    image: ghcr.io/acme/lint:2\n  local:\n    image: host\n"))
	if err != nil {
		t.Fatal(err)
	}
	none := &policy.RepoConfig{}
	serve := ImageOptions{Restrict: true, Default: "docker.io/library/debian:12", Allow: []string{"docker.io/library/golang:*"}}
	for _, tc := range []struct {
		name string
		o    ImageOptions
		cfg  *policy.RepoConfig
		pl   string
		want string // or the error's text
		err  bool
	}{
		{name: "local, repository's", cfg: cfg, pl: "ci", want: "golang:1.23"},
		{name: "local, pipeline's", cfg: cfg, pl: "lint", want: "ghcr.io/acme/lint:2"},
		{name: "local, none", cfg: none, pl: "ci", want: "host"},
		{name: "local, --image", o: ImageOptions{Override: "oci:/x"}, cfg: cfg, pl: "lint", want: "oci:/x"},
		{name: "local, --image host", o: ImageOptions{Override: "host"}, cfg: cfg, pl: "ci", want: "host"},
		{name: "serve, allowed", o: serve, cfg: cfg, pl: "ci", want: "golang:1.23"},
		{name: "serve, default", o: serve, cfg: none, pl: "ci", want: "docker.io/library/debian:12"},
		{name: "serve, refused", o: serve, cfg: cfg, pl: "lint", err: true,
			want: ".kilroy/config.yml:6:5: pipelines.lint.image: ghcr.io/acme/lint:2 is not allowed on this server; images.allow: `docker.io/library/golang:*`"},
		{name: "serve, host refused", o: serve, cfg: cfg, pl: "local", err: true, want: "pipelines.local.image: host is not allowed"},
		{name: "serve, host allowed", o: ImageOptions{Restrict: true, Allow: []string{"host"}}, cfg: cfg, pl: "local", want: "host"},
		{name: "serve, nothing allowed", o: ImageOptions{Restrict: true}, cfg: cfg, pl: "ci", err: true,
			want: "images.allow: none: this server runs only its default image"},
	} {
		got, err := tc.o.Choose(tc.cfg, tc.pl)
		switch {
		case tc.err && (err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %q, %v; want a usage error saying %q", tc.name, got, err, tc.want)
		case !tc.err && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// The image's tag is resolved while the run's worktree is checked out,
// not after it: the registry's round trips are off the run's critical
// path. The git wrapper holds `git worktree add` until the store's
// Resolve has begun (for up to 5 s), and Resolve records whether the
// checkout was done by then; run after the checkout, it would find it
// done.
func TestPrepareResolvesImageDuringCheckout(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": onePipeline})
	bin := t.TempDir()
	marker := filepath.Join(bin, "resolving")
	wrapper := filepath.Join(bin, "git")
	script := "#!/bin/sh\nw=\nfor a in \"$@\"; do\n" +
		"  if [ \"$a\" = worktree ]; then w=1; elif [ -n \"$w\" ] && [ \"$a\" = add ]; then\n" +
		"    i=0; while [ ! -e " + marker + " ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; break\n" +
		"  fi\ndone\nexec " + gittest.Path(t) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	o := localOptions(t, repo)
	o.GitPath = wrapper
	probe := &checkoutProbe{marker: marker, worktree: RunDir(o.RunDir).Worktree()}
	o.Images = ImageOptions{Store: probe, Override: "tools:1"}
	_, err := PrepareLocal(context.Background(), o)
	if !errors.Is(err, errProbed) {
		t.Fatalf("PrepareLocal: %v, want the probe's error", err)
	}
	if probe.calls.Load() != 1 {
		t.Fatalf("Resolve was called %d times, want once", probe.calls.Load())
	}
	if probe.checkedOut {
		t.Error("the tag was resolved after the worktree was checked out, not while")
	}
	if _, err := os.Stat(RunDir(o.RunDir).Worktree()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused run's worktree is still there: %v", err)
	}
}

var errProbed = errors.New("probed")

// checkoutProbe is an image store whose Resolve notes whether the
// worktree was checked out by then, then fails with errProbed.
type checkoutProbe struct {
	marker, worktree string
	calls            atomic.Int32
	checkedOut       bool
}

func (c *checkoutProbe) Resolve(ctx context.Context, ref string) (image.Ref, error) {
	c.calls.Add(1)
	_, err := os.Stat(filepath.Join(c.worktree, ".kilroy", "ci.dot"))
	c.checkedOut = err == nil
	if err := os.WriteFile(c.marker, nil, 0o644); err != nil {
		return image.Ref{}, err
	}
	return image.Ref{}, errProbed
}

func (c *checkoutProbe) Ensure(ctx context.Context, ref image.Ref) (*image.Image, error) {
	return nil, errors.New("checkoutProbe: Ensure is not expected")
}
