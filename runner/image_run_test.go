package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/policy"
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
