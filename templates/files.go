package templates

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// ConfigTemplate is the name under which `kilroy-bot init` hands out
// ConfigFile: it is listed with the templates but is a file, not a
// directory, and goes to .kilroy/config.yml.
const ConfigTemplate = "config"

// AgentsFile is where a template with a coding agent puts the sample
// agents configuration a local run reads with --agents.
const AgentsFile = ".kilroy/agents.yml"

// File is one file a template adds, at its repository-relative path.
type File struct {
	Path    string // slash-separated, such as .kilroy/ci.dot
	Content []byte
}

// Choices lists what Files accepts: the templates, then ConfigTemplate.
func Choices() []string {
	return append(Names(), ConfigTemplate)
}

// Files returns what template name adds to a repository, by path.
func Files(name string) ([]File, error) {
	if name == ConfigTemplate {
		data, err := fs.ReadFile(files, ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		return []File{{Path: ".kilroy/config.yml", Content: data}}, nil
	}
	if !slices.Contains(Names(), name) {
		return nil, &UnknownError{Name: name}
	}
	var out []File
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: strings.TrimPrefix(p, name+"/"), Content: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return out, nil
}

// UnknownError names a template that does not exist, the ones that do,
// and the nearest.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("no template %q (templates: %s)", e.Name, strings.Join(Choices(), ", "))
	if s := attractor.Suggest(e.Name, Choices()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

// markers map a file at a repository's root to the CI template for its
// toolchain.
func markers() map[string]string {
	return map[string]string{
		"go.mod": "ci-go", "go.work": "ci-go",
		"package.json":   "ci-node",
		"pyproject.toml": "ci-python", "requirements.txt": "ci-python", "setup.py": "ci-python",
		"Cargo.toml": "ci-rust",
		"pom.xml":    "ci-java", "build.gradle": "ci-java", "build.gradle.kts": "ci-java",
		"settings.gradle": "ci-java", "settings.gradle.kts": "ci-java",
	}
}

// MarkerFiles lists the files Detect looks for, sorted.
func MarkerFiles() []string {
	return slices.Sorted(maps.Keys(markers()))
}

// GenericTemplate is the template for a repository of no known toolchain.
const GenericTemplate = "ci-generic"

// Detect returns the CI templates whose toolchain marker files (go.mod,
// package.json, pyproject.toml, …) are at the root of repo, sorted.
func Detect(repo fs.FS) []string {
	return detectIn(repo, ".")
}

func detectIn(repo fs.FS, dir string) []string {
	var found []string
	for marker, tmpl := range markers() {
		if st, err := fs.Stat(repo, path.Join(dir, marker)); err == nil && !st.IsDir() && !slices.Contains(found, tmpl) {
			found = append(found, tmpl)
		}
	}
	slices.Sort(found)
	return found
}

// Suggestion is the closest template for a repository Detect finds no
// toolchain in, and why.
type Suggestion struct {
	Template string
	Reason   string
}

// Suggest looks where Detect does not: a toolchain file one directory
// down (a project in a subdirectory, such as web/package.json) suggests
// that toolchain's template, whose commands then need a `cd`; anything
// else suggests GenericTemplate.
func Suggest(repo fs.FS) Suggestion {
	entries, _ := fs.ReadDir(repo, ".")
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" || e.Name() == "vendor" {
			continue
		}
		if found := detectIn(repo, e.Name()); len(found) == 1 {
			return Suggestion{Template: found[0], Reason: fmt.Sprintf(
				"%s/ holds a %s project: its commands then need `cd %s && ` in front", e.Name(), strings.TrimPrefix(found[0], "ci-"), e.Name())}
		}
	}
	if st, err := fs.Stat(repo, "Makefile"); err == nil && !st.IsDir() {
		return Suggestion{Template: GenericTemplate, Reason: "it runs `make test`, and there is a Makefile"}
	}
	return Suggestion{Template: GenericTemplate, Reason: "it runs `make test`: change the command to what your project runs in CI"}
}
