package image

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const someDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"golang", "docker.io/library/golang:latest"},
		{"golang:1.23", "docker.io/library/golang:1.23"},
		{"golang:1.23-bookworm", "docker.io/library/golang:1.23-bookworm"},
		{"docker.io/library/golang:1.23", "docker.io/library/golang:1.23"},
		{"index.docker.io/library/golang:1.23", "docker.io/library/golang:1.23"},
		{"acme/tools:3", "docker.io/acme/tools:3"},
		{"ghcr.io/acme/ci-tools:3", "ghcr.io/acme/ci-tools:3"},
		{"ghcr.io/acme/ci-tools", "ghcr.io/acme/ci-tools:latest"},
		{"localhost:5000/x", "localhost:5000/x:latest"},
		{"127.0.0.1:5000/a/b/c:dev", "127.0.0.1:5000/a/b/c:dev"},
		{"golang@" + someDigest, "docker.io/library/golang@" + someDigest},
		{"golang:1.23@" + someDigest, "docker.io/library/golang:1.23@" + someDigest},
		{"registry.example:5000/team/img:v1@" + someDigest, "registry.example:5000/team/img:v1@" + someDigest},
	} {
		got, err := Normalize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "Golang", "golang:", "golang@sha256:abc", "a//b", "ghcr.io/acme/../evil/x", "ghcr.io/acme/./x", "acme/.x", "acme/x.", "acme/-x", "oci:/tmp/x", "docker-archive:x.tar", "golang:bad tag"} {
		if got, err := Normalize(bad); !errors.Is(err, ErrBadReference) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrBadReference", bad, got, err)
		}
	}
}

func TestAllowed(t *testing.T) {
	patterns := []string{"docker.io/library/golang:*", "ghcr.io/acme/**", "docker.io/library/python{:,@}*"}
	for _, tc := range []struct {
		ref  string
		want bool
	}{
		{"golang:1.23", true},
		{"golang", true}, // :latest
		{"docker.io/library/golang:1.23-bookworm", true},
		{"golang:1.23@" + someDigest, true},
		{"golang@" + someDigest, false}, // no tag: the pattern names one
		{"python@" + someDigest, true},
		{"python:3.12", true},
		{"ghcr.io/acme/ci-tools:3", true},
		{"ghcr.io/acme/team/tool:1", true},
		{"ghcr.io/other/tool:1", false},
		{"ghcr.io/acme/../other/tool:1", false},
		{"golangci/golangci-lint:v1", false},
		{"evil.example/library/golang:1.23", false},
		{"docker.io/library/golang-evil:1", false},
		{"oci:/tmp/x", false},
		{"not a ref", false},
	} {
		if got := Allowed(tc.ref, patterns); got != tc.want {
			t.Errorf("Allowed(%q) = %v, want %v", tc.ref, got, tc.want)
		}
	}
	if Allowed("golang:1.23", nil) {
		t.Error("allowed with no patterns")
	}
}

func TestCheckPattern(t *testing.T) {
	for p, want := range map[string]string{
		"docker.io/library/golang:*": "",
		"ghcr.io/acme/**":            "",
		"localhost/x:*":              "",
		"127.0.0.1:5000/**":          "",
		"**":                         "",
		"*/acme/*":                   "",
		"golang:*":                   "registry host",
		"library/golang:*":           "registry host",
		"docker.io/[":                "not a valid glob",
	} {
		err := CheckPattern(p)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckPattern(%q) = %v, want %q", p, err, want)
		}
	}
}

func TestLocalRefs(t *testing.T) {
	for ref, want := range map[string]bool{
		"oci:/x": true, "oci-archive:x.tar": true, "docker-archive:/x.tar": true,
		"golang:1.23": false, "ociregistry.example/x": false, "host": false,
	} {
		if got := Local(ref); got != want {
			t.Errorf("Local(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestRefString(t *testing.T) {
	for r, want := range map[Ref]string{
		{Name: "docker.io/library/golang:1.23", Digest: someDigest}:                              "docker.io/library/golang:1.23@" + someDigest,
		{Name: "docker.io/library/golang@sha256:" + strings.Repeat("f", 64), Digest: someDigest}: "docker.io/library/golang@" + someDigest,
		{Name: "oci-archive:/x/a@b.tar", Digest: someDigest}:                                     "oci-archive:/x/a@b.tar@" + someDigest,
	} {
		if got := r.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", r, got, want)
		}
	}
}

func ExampleNormalize() {
	for _, ref := range []string{"golang:1.23", "ghcr.io/acme/tools", "localhost:5000/x:dev"} {
		full, _ := Normalize(ref)
		fmt.Println(full)
	}
	// Output:
	// docker.io/library/golang:1.23
	// ghcr.io/acme/tools:latest
	// localhost:5000/x:dev
}
