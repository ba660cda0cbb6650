package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// ImageHost is the `image:` value that runs nodes on the bot's own
// toolchain (the host jail) instead of an image.
const ImageHost = "host"

// ImageChoice is an `image:` of the configuration: the reference as
// written, and where, so that a server refusing it can point at the line.
type ImageChoice struct {
	Ref string `json:"ref"`
	// At places the key: File, Line, Col and Key, no message.
	At ConfigError `json:"-"`
}

// IsZero reports that no `image:` was written.
func (c ImageChoice) IsZero() bool { return c.Ref == "" }

// Errorf is a problem with the choice, at its key, in this package's form
// ("image: ...").
func (c ImageChoice) Errorf(format string, args ...any) *ConfigError {
	e := c.At
	e.Msg = e.Key + ": " + fmt.Sprintf(format, args...)
	return &e
}

// ImageFor is the image pipeline name runs in: its own `image:`, else the
// repository's; zero when neither names one (the server's default then).
func (c *RepoConfig) ImageFor(name string) ImageChoice {
	if p, ok := c.Pipelines[name]; ok && !p.Image.IsZero() {
		return p.Image
	}
	return c.Image
}

// imageRef is the syntax an image reference may have here: the
// distribution spec's name, an optional tag and an optional digest.
// runner/image.Normalize checks the rest when the reference is used.
var imageRef = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]{1,2}[a-z0-9]+|-+[a-z0-9]+)*)*` +
	`(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$`)

func validateImage(ref string, at keyPath) []fieldError {
	if ref == "" || ref == ImageHost || imageRef.MatchString(ref) {
		return nil
	}
	why := "not an image reference"
	if strings.ToLower(ref) != ref && !strings.ContainsAny(ref, ":@") {
		why = "image names are lower case"
	}
	return []fieldError{fieldErrorf(at, "%q is %s; write one like golang:1.23-bookworm, ghcr.io/acme/ci-tools:3 or "+
		"NAME@sha256:DIGEST, or host for the bot's own toolchain", ref, why)}
}

// placeImages records where the `image:` keys are.
func placeImages(doc *document, c *RepoConfig, f fileConfig) {
	if f.Image != "" {
		c.Image = ImageChoice{Ref: f.Image, At: *doc.place(fieldError{path: keyPath{"image"}})}
	}
	for name, fp := range f.Pipelines {
		if fp.Image != "" {
			p := c.Pipelines[name]
			p.Image = ImageChoice{Ref: fp.Image, At: *doc.place(fieldError{path: keyPath{"pipelines", name, "image"}})}
			c.Pipelines[name] = p
		}
	}
}
