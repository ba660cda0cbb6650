package templates

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Image is the OCI image `kilroy-bot init` suggests for a template: an
// official Debian-based image (they have bash, which shell nodes run)
// holding the template's toolchain. For ci-go it follows the go directive
// of go.mod (go 1.23.4: golang:1.23-bookworm). "" for a template with no
// toolchain of its own (agent-fix), which Detect then decides.
func Image(template string, repo fs.FS) string {
	switch template {
	case "ci-go":
		return "golang:" + goMinor(repo) + "-bookworm"
	case "ci-node":
		return "node:22-bookworm"
	case "ci-python":
		return "python:3.12-bookworm"
	case "ci-rust":
		return "rust:1-bookworm"
	case "ci-java":
		if isFile(repo, "pom.xml") {
			return "maven:3-eclipse-temurin-21"
		}
		return "gradle:8-jdk21"
	case GenericTemplate:
		return "buildpack-deps:bookworm"
	}
	if found := Detect(repo); len(found) == 1 {
		return Image(found[0], repo)
	}
	return ""
}

// goMinor is the language version go.mod (or go.work) asks for, to its
// minor version ("1.23"); "1" (the newest Go 1) without one.
func goMinor(repo fs.FS) string {
	for _, name := range []string{"go.mod", "go.work"} {
		b, err := fs.ReadFile(repo, name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "go" {
				parts := strings.SplitN(f[1], ".", 3)
				if len(parts) >= 2 && parts[0] == "1" && strings.Trim(parts[1], "0123456789") == "" {
					return "1." + parts[1]
				}
			}
		}
	}
	return "1"
}

func isFile(repo fs.FS, name string) bool {
	st, err := fs.Stat(repo, name)
	return err == nil && !st.IsDir()
}

// imageLine is the sample config's commented image: line, which
// ImageComment replaces with the suggested image.
const imageLine = "# image: golang:1.23-bookworm\n"

// ConfigWithImage is the sample .kilroy/config.yml with image suggested,
// commented out.
func ConfigWithImage(image string) ([]byte, error) {
	b, i, err := sampleImageLine()
	if err != nil || image == "" {
		return b, err
	}
	return slices.Concat(b[:i], []byte("# image: "+image+"\n"), b[i+len(imageLine):]), nil
}

// ImageConfig is the .kilroy/config.yml `kilroy-bot init` writes beside a
// pipeline template when the repository has none: no setting, the
// suggested image commented out below the sample's explanation of image:.
// Without pipelines: it changes nothing (every .kilroy/*.dot still runs).
func ImageConfig(image string) (File, error) {
	b, i, err := sampleImageLine()
	if err != nil {
		return File{}, err
	}
	about := b[bytes.LastIndex(b[:i], []byte("\n\n"))+2 : i]
	body := "# .kilroy/config.yml, written by kilroy-bot init; every setting, commented:\n" +
		"# kilroy-bot init --template config --force\n" +
		"version: 1\n\n" + string(about) + "# image: " + image + "\n"
	return File{Path: ".kilroy/config.yml", Content: []byte(body)}, nil
}

// sampleImageLine is the sample config and where its image: line is.
func sampleImageLine() ([]byte, int, error) {
	b, err := fs.ReadFile(files, ConfigFile)
	if err != nil {
		return nil, 0, err
	}
	i := bytes.Index(b, []byte(imageLine))
	if i < 0 {
		return nil, 0, fmt.Errorf("template %s: no %q line to suggest an image on", ConfigFile, strings.TrimSpace(imageLine))
	}
	return b, i, nil
}

// IsImageConfig reports whether b is a config.yml ImageConfig wrote and
// nobody changed since: `kilroy-bot init --template config` replaces it
// with the sample, which suggests the same image, without --force.
func IsImageConfig(b []byte) bool {
	i := bytes.LastIndex(b, []byte("\n# image: "))
	if i < 0 {
		return false
	}
	img, ok := strings.CutSuffix(string(b[i+len("\n# image: "):]), "\n")
	if !ok || strings.Contains(img, "\n") {
		return false
	}
	f, err := ImageConfig(img)
	return err == nil && bytes.Equal(f.Content, b)
}
