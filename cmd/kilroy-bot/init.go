package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/templates"
)

const initUsage = `usage: kilroy-bot init [--template NAME] [--repo DIR] [--force]

Writes a starter pipeline into the repository's .kilroy/ directory.
Without --template it picks the CI template of the toolchain whose file is
at the repository's root (go.mod: ci-go, package.json: ci-node,
pyproject.toml, requirements.txt or setup.py: ci-python, Cargo.toml:
ci-rust, pom.xml or build.gradle: ci-java); with none it suggests the
closest one. It also suggests the OCI image of that toolchain (for go.mod,
golang:<its go version>-bookworm), commented out, in a .kilroy/config.yml
it writes when there is none; a served repository may use only the images
its operator allows (images.allow).

Templates:
  ci-go       .kilroy/ci.dot: go build, go vet, go test, artifact check
  ci-node     .kilroy/ci.dot: install by lockfile (npm, yarn, pnpm), lint, test
  ci-python   .kilroy/ci.dot: pip install into .venv, pytest
  ci-rust     .kilroy/ci.dot: cargo build, cargo clippy, cargo test
  ci-java     .kilroy/ci.dot: Maven or Gradle by build file: compile, test
  ci-generic  .kilroy/ci.dot: make test, artifact check
  agent-fix   .kilroy/fix.dot: a coding agent fixes the code until the tests pass,
              and .kilroy/agents.yml: its agent backend for kilroy-bot run --agents
  config      .kilroy/config.yml: every setting, commented (optional)

Flags:
  --template NAME   the template to write (default: detected)
  --repo DIR        the repository (default: the one around the current directory)
  --force           overwrite files that already exist

Exit status: 0 written, 1 a file could not be written, 2 usage (unknown
template, a file that exists without --force).
`

// runInit implements `kilroy-bot init`.
func runInit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("template", "", "")
	repo := fs.String("repo", ".", "")
	force := fs.Bool("force", false, "")
	if code, ok := parseFlags(fs, args, "init", initUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kilroy-bot init: unexpected argument %q: pass the template with --template\n\n%s", fs.Arg(0), initUsage)
		return 2
	}
	root := repoRoot(*repo)
	if *name == "" {
		n, err := detectTemplate(root)
		if err != nil {
			fmt.Fprintf(stderr, "kilroy-bot init: %v\n", err)
			return 2
		}
		*name = n
	}
	files, err := templates.Files(*name)
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot init: %v\n", err)
		return 2
	}
	files, note, err := withImage(root, *name, files)
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot init: %v\n", err)
		return 1
	}
	if !*force {
		if err := refuseExisting(root, files); err != nil {
			fmt.Fprintf(stderr, "kilroy-bot init: %v\n", err)
			return 2
		}
	}
	for _, f := range files {
		if err := writeTemplateFile(root, f); err != nil {
			fmt.Fprintf(stderr, "kilroy-bot init: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", displayPath(root, f.Path))
	}
	fmt.Fprint(stdout, note)
	fmt.Fprint(stdout, initNext(root, files))
	return 0
}

// withImage suggests the image of the template's toolchain, commented out
// (a served repository may use only the images its operator allows): in
// the sample config when that is the template, else in a config.yml of
// its own beside the pipeline, or, when the repository has a config.yml
// already, in a note for the user to add by hand.
func withImage(root, name string, files []templates.File) ([]templates.File, string, error) {
	img := templates.Image(name, os.DirFS(root))
	if name == templates.ConfigTemplate {
		b, err := templates.ConfigWithImage(img)
		files[0].Content = b
		return files, "", err
	}
	if img == "" {
		return files, "", nil
	}
	if _, err := os.Lstat(filepath.Join(root, ".kilroy", "config.yml")); err == nil {
		return files, fmt.Sprintf("\nto run the nodes in an image with the toolchain, add to %s:\n  image: %s\n"+
			"(a server runs only the images its operator allows in images.allow)\n", displayPath(root, ".kilroy/config.yml"), img), nil
	}
	f, err := templates.ImageConfig(img)
	return append(files, f), "", err
}

// repoRoot is the directory holding .git at or above dir, else dir: a
// directory that is not a repository yet gets its .kilroy/ where asked.
func repoRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return abs
		}
	}
}

func detectTemplate(root string) (string, error) {
	found := templates.Detect(os.DirFS(root))
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		s := templates.Suggest(os.DirFS(root))
		return "", fmt.Errorf("no toolchain file (%s) at %s to pick a template from.\nThe closest is %s: %s.\nWrite it with: kilroy-bot init --template %s   (templates: %s)",
			strings.Join(templates.MarkerFiles(), ", "), root, s.Template, s.Reason, s.Template, strings.Join(templates.Choices(), ", "))
	}
	return "", fmt.Errorf("%s has files of several toolchains: choose a template with --template NAME (%s)", root, strings.Join(found, ", "))
}

// refuseExisting fails when any file would be overwritten, before any is
// written, so a refused init changes nothing.
func refuseExisting(root string, files []templates.File) error {
	var exist []string
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if b, err := os.ReadFile(p); err == nil && templates.IsImageConfig(b) && f.Path == ".kilroy/config.yml" {
			continue // init's own, unchanged: the sample holds the same
		}
		if _, err := os.Lstat(p); err == nil {
			exist = append(exist, displayPath(root, f.Path))
		}
	}
	if len(exist) > 0 {
		return fmt.Errorf("%s already exists: keep it, or pass --force to overwrite it", strings.Join(exist, " and "))
	}
	return nil
}

func writeTemplateFile(root string, f templates.File) error {
	p := filepath.Join(root, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(p), pathErr(err))
	}
	if err := os.WriteFile(p, f.Content, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p, pathErr(err))
	}
	return nil
}

// displayPath shows a written file relative to the working directory when
// it is below it, else in full.
func displayPath(root, rel string) string {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}

// initNext says what to do after init: check, commit (runs read the
// pipeline from the commit, not the working tree), run.
func initNext(root string, files []templates.File) string {
	repoArg, gitArg := "", ""
	if wd, err := os.Getwd(); err != nil || filepath.Clean(wd) != root {
		repoArg, gitArg = " --repo "+root, " -C "+root
	}
	var b strings.Builder
	b.WriteString("\nnext:\n")
	fmt.Fprintf(&b, "  kilroy-bot validate%s\n", repoArg)
	fmt.Fprintf(&b, "  git%s add .kilroy && git%s commit -m 'Add kilroy pipeline'   (runs read committed files)\n", gitArg, gitArg)
	agentsArg := ""
	for _, f := range files {
		if f.Path == templates.AgentsFile {
			agentsArg = " --agents " + displayPath(root, f.Path)
			fmt.Fprintf(&b, "  set the key variable %s names (key_env) in this shell, or point it at your model server\n", displayPath(root, f.Path))
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".dot") {
			fmt.Fprintf(&b, "  kilroy-bot run%s%s --graph %s\n", repoArg, agentsArg, strings.TrimSuffix(filepath.Base(f.Path), ".dot"))
		}
	}
	return b.String()
}
