package image

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/google/go-containerregistry/pkg/name"
)

// The prefixes of local sources, as skopeo and podman spell them.
const (
	SourceOCI           = "oci:"
	SourceOCIArchive    = "oci-archive:"
	SourceDockerArchive = "docker-archive:"
)

// docker.io is what people write and what patterns name; go-containerregistry
// says index.docker.io.
const (
	dockerHub      = "docker.io"
	dockerHubIndex = name.DefaultRegistry
)

// Ref is an image pinned to one digest, as Resolve returns it and as a run
// records it (a resume builds it back from the checkpoint).
type Ref struct {
	// Name is the normalised reference (Normalize), or a local source as
	// given ("oci-archive:/abs/path.tar", the path made absolute).
	Name string `json:"name"`
	// Digest is "sha256:<hex>": the manifest of the image for the platform
	// (never a manifest list), or for docker-archive the image ID (the
	// digest of its config), since such an archive has no manifest.
	Digest string `json:"digest"`
}

// String is the pinned reference, "NAME@DIGEST" (a digest the name
// carried, say of a manifest list, gives way to the pinned one).
func (r Ref) String() string {
	n, _, _ := strings.Cut(r.Name, "@")
	if Local(r.Name) {
		n = r.Name
	}
	return n + "@" + r.Digest
}

// Local reports whether the reference names a local source (oci:,
// oci-archive:, docker-archive:) rather than a registry.
func Local(ref string) bool {
	_, _, ok := splitLocal(ref)
	return ok
}

// splitLocal returns the prefix and the path of a local source.
func splitLocal(ref string) (prefix, path string, ok bool) {
	for _, p := range []string{SourceOCI, SourceOCIArchive, SourceDockerArchive} {
		if rest, found := strings.CutPrefix(ref, p); found {
			return p, rest, true
		}
	}
	return "", "", false
}

// localName is the Ref.Name of a local source: its path made absolute, so
// a pinned reference does not depend on the working directory.
func localName(ref string) (prefix, path string, err error) {
	prefix, path, _ = splitLocal(ref)
	if path == "" {
		return "", "", fmt.Errorf("image %q: %w: no path after %q", ref, ErrBadReference, prefix)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("image %q: %w", ref, err)
	}
	return prefix, abs, nil
}

// Normalize spells a registry reference in full, the form images.allow
// patterns match: the registry (docker.io for Docker Hub), the repository
// (library/ for Docker Hub's official images), then the tag (latest when
// none is given) and the digest when given.
//
//	golang:1.23               → docker.io/library/golang:1.23
//	ghcr.io/acme/tools        → ghcr.io/acme/tools:latest
//	golang:1.23@sha256:…      → docker.io/library/golang:1.23@sha256:…
//	golang@sha256:…           → docker.io/library/golang@sha256:…
//
// Local sources (oci:, oci-archive:, docker-archive:) are not registry
// references and are refused.
func Normalize(ref string) (string, error) {
	if Local(ref) {
		return "", fmt.Errorf("image %q: %w: a local source has no registry name", ref, ErrBadReference)
	}
	named, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest {
		if _, err := name.NewDigest(ref); err != nil {
			return "", fmt.Errorf("image %q: %w: %v", ref, ErrBadReference, err)
		}
	}
	repo, tag, err := splitTag(named, !hasDigest)
	if err != nil {
		return "", fmt.Errorf("image %q: %w: %v", ref, ErrBadReference, err)
	}
	out := repo
	if tag != "" {
		out += ":" + tag
	}
	if hasDigest {
		out += "@" + digest
	}
	return out, nil
}

// splitTag parses NAME[:TAG] into the full repository name and the tag:
// "latest" when none is given and defaultTag is set, else "".
func splitTag(s string, defaultTag bool) (repo, tag string, err error) {
	t, err := name.NewTag(s)
	if err != nil {
		return "", "", err
	}
	for _, c := range strings.Split(t.RepositoryStr(), "/") {
		if !pathComponent.MatchString(c) {
			return "", "", fmt.Errorf("repository path element %q", c)
		}
	}
	last := s[strings.LastIndex(s, "/")+1:]
	if strings.Contains(last, ":") || defaultTag {
		tag = t.TagStr()
	}
	return fullRepo(t.Context()), tag, nil
}

// pathComponent is an element of a repository's path, as the distribution
// spec has it. go-containerregistry lets "", "." and ".." through, which
// would let "ghcr.io/acme/../evil/x" match a pattern for ghcr.io/acme/.
var pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$`)

// fullRepo is the repository's name with docker.io spelled as people do.
func fullRepo(r name.Repository) string {
	reg := r.RegistryStr()
	if reg == dockerHubIndex {
		reg = dockerHub
	}
	return reg + "/" + r.RepositoryStr()
}

// Allowed reports whether the reference is matched by one of the patterns
// (doublestar, over the normalised reference: "*" stops at "/", "**" does
// not). Patterns are matched as written, so they name the registry in full
// (CheckPattern refuses the short forms). A reference that does not parse,
// or a local source, is never allowed.
func Allowed(ref string, patterns []string) bool {
	full, err := Normalize(ref)
	if err != nil {
		return false
	}
	for _, p := range patterns {
		if ok, err := doublestar.Match(p, full); err == nil && ok {
			return true
		}
	}
	return false
}

// CheckPattern explains what is wrong with an images.allow pattern: a bad
// glob, or a first element that is not a registry host (so "golang:*",
// which would never match "docker.io/library/golang:1.23").
func CheckPattern(p string) error {
	if !doublestar.ValidatePattern(p) {
		return fmt.Errorf("image pattern %q: not a valid glob", p)
	}
	host, _, _ := strings.Cut(p, "/")
	if strings.ContainsAny(host[:min(len(host), 1)], "*?[{") {
		return nil // a pattern that starts with a glob matches any registry
	}
	if !strings.Contains(p, "/") || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return fmt.Errorf("image pattern %q: must start with a registry host, e.g. %q", p, "docker.io/library/golang:*")
	}
	return nil
}
