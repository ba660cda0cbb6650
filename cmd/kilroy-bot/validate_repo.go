package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
)

// validateTarget is one file validate checks.
type validateTarget struct {
	path    string // to read
	display string // in messages
	// root is the repository whose pipelines a config.yml names, "" when
	// unknown (a config file outside a .kilroy directory).
	root string
}

// isConfigFile tells configuration from pipelines by the extension:
// anything YAML is configuration, the rest is DOT.
func isConfigFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yml" || ext == ".yaml"
}

// check returns the target's diagnostics.
func (tg validateTarget) check(src []byte, ac agentsCheck) attractor.Diagnostics {
	if isConfigFile(tg.path) {
		root := tg.root
		if root == "" && filepath.Base(filepath.Dir(tg.path)) == ".kilroy" {
			root = filepath.Dir(filepath.Dir(tg.path))
		}
		return checkConfig(tg.display, src, root)
	}
	// The diagnostics say everything the error does. A house node's child
	// pipeline is read from the repository the file is in.
	p, ds, _ := attractor.Load(tg.display, src, attractor.WithRepoDir(tg.pipelineRoot()))
	return append(ds, ac.diagnostics(p)...)
}

// pipelineRoot is the repository a pipeline's paths (stack.child_dotfile)
// are relative to: the one given, else the parent of the .kilroy
// directory the file is in, else the git repository around it.
func (tg validateTarget) pipelineRoot() string {
	dir := filepath.Dir(tg.path)
	switch {
	case tg.root != "":
		return tg.root
	case filepath.Base(dir) == ".kilroy":
		return filepath.Dir(dir)
	}
	return repoRoot(dir)
}

// repoTargets lists what `validate` checks without files: the .kilroy/
// of the repository around dir.
func repoTargets(dir string) ([]validateTarget, error) {
	root := repoRoot(dir)
	kdir := filepath.Join(root, ".kilroy")
	entries, err := os.ReadDir(kdir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cannot read %s: %w", kdir, pathErr(err))
	}
	var targets []validateTarget
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".dot") || name == "config.yml") {
			continue
		}
		p := filepath.Join(kdir, name)
		targets = append(targets, validateTarget{path: p, display: displayPath(root, ".kilroy/"+name), root: root})
	}
	if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "config.yaml" }) {
		return nil, fmt.Errorf("%s is not read: kilroy-bot reads .kilroy/config.yml; rename it", displayPath(root, ".kilroy/config.yaml"))
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%s has no .kilroy/*.dot pipeline or .kilroy/config.yml to check: `kilroy-bot init` writes a starter pipeline, or give the files to check", root)
	}
	return targets, nil
}

// checkConfig validates a config.yml as runs read it and, when the
// repository is known, that every pipeline it names has its graph.
func checkConfig(display string, src []byte, root string) attractor.Diagnostics {
	cfg, err := policy.ParseRepoConfig(display, src)
	if err != nil {
		return configDiagnostics(display, err)
	}
	if root == "" {
		return nil
	}
	var ds attractor.Diagnostics
	for _, name := range sortedPipelines(cfg) {
		pl := cfg.Pipelines[name]
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(pl.Graph))); err == nil {
			continue
		}
		line, col := findLine(src, pl.Graph, name+":")
		ds = append(ds, attractor.Diagnostic{Rule: "config_graph_exists", Severity: attractor.SeverityError,
			File: display, Line: line, Col: col,
			Message: fmt.Sprintf("pipeline %q: its graph %s does not exist", name, pl.Graph),
			Fix:     graphFix(name, pl.Graph)})
	}
	return ds
}

func graphFix(name, graph string) string {
	fix := fmt.Sprintf("add %s, fix `graph:`, or remove pipeline %s", graph, name)
	if path.Base(graph) == "fix.dot" {
		fix = "kilroy-bot init --template agent-fix writes .kilroy/fix.dot; or " + fix
	}
	return fix
}

func sortedPipelines(cfg *policy.RepoConfig) []string {
	names := make([]string, 0, len(cfg.Pipelines))
	for n := range cfg.Pipelines {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// configDiagnostics turns the config parser's errors into validate's
// diagnostics, keeping their positions.
func configDiagnostics(display string, err error) attractor.Diagnostics {
	var ces policy.ConfigErrors
	if !errors.As(err, &ces) {
		return attractor.Diagnostics{{Rule: "config", Severity: attractor.SeverityError, File: display, Line: 1, Col: 1, Message: err.Error()}}
	}
	ds := make(attractor.Diagnostics, 0, len(ces))
	for _, ce := range ces {
		msg := ce.Msg
		// Some messages carry the position already; the diagnostic has it.
		msg = strings.TrimPrefix(msg, fmt.Sprintf("%s:%d:%d: ", display, ce.Line, ce.Col))
		ds = append(ds, attractor.Diagnostic{Rule: "config", Severity: attractor.SeverityError,
			File: display, Line: max(ce.Line, 1), Col: max(ce.Col, 1), Message: msg})
	}
	return ds
}

// findLine returns the 1-based line and column of the first of needles
// found in src (a pipeline's graph path, else its key), or 1:1.
func findLine(src []byte, needles ...string) (int, int) {
	lines := strings.Split(string(src), "\n")
	for _, n := range needles {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			if c := strings.Index(l, n); c >= 0 {
				return i + 1, c + 1
			}
		}
	}
	return 1, 1
}
