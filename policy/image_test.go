package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// `image:` is read per repository and per pipeline over it, and each
// choice keeps its line, for a server that refuses it.
func TestImageChoice(t *testing.T) {
	cfg, err := ParseRepoConfig(".kilroy/config.yml", []byte(`version: 1
image: ghcr.io/acme/ci-tools:3
pipelines:
  ci:
    image: golang:1.23-bookworm
  lint: {}
  pinned:
    image: registry.local:5000/team/tools@sha256:`+strings.Repeat("a", 64)+`
  local:
    image: host
`))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Ref  string
		Line int
		Key  string
	}
	var gots []got
	for _, name := range []string{"ci", "lint", "pinned", "local", "nosuch"} {
		c := cfg.ImageFor(name)
		gots = append(gots, got{c.Ref, c.At.Line, c.At.Key})
	}
	want := []got{
		{"golang:1.23-bookworm", 5, "pipelines.ci.image"},
		{"ghcr.io/acme/ci-tools:3", 2, "image"},
		{"registry.local:5000/team/tools@sha256:" + strings.Repeat("a", 64), 8, "pipelines.pinned.image"},
		{"host", 10, "pipelines.local.image"},
		{"ghcr.io/acme/ci-tools:3", 2, "image"},
	}
	if diff := cmp.Diff(gots, want); diff != "" {
		t.Errorf("ImageFor (-got +want):\n%s", diff)
	}
	if e := cfg.ImageFor("ci").Errorf("refused"); e.Error() != ".kilroy/config.yml:5:5: pipelines.ci.image: refused" {
		t.Errorf("Errorf = %q", e.Error())
	}
}

func TestImageChoiceSyntax(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"Golang:1.23", `image: "Golang:1.23" is not an image reference`},
		{"golang:1.23 bookworm", "is not valid (The OCI image"},
		{"golang@sha256:abc", `image: "golang@sha256:abc" is not an image reference`},
		{"../etc:1", `is not an image reference`},
		{`""`, "minLength"},
	} {
		_, err := ParseRepoConfig(".kilroy/config.yml", []byte("version: 1\nimage: "+tc.value+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ":2:") {
			t.Errorf("image: %s: error %v, want one on line 2 saying %q", tc.value, err, tc.want)
		}
	}
}
