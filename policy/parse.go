package policy

import (
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

var pipelineNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// MaxConfigBytes is the largest `.kilroy/config.yml` accepted (1 MiB): the
// file comes from a pull request and is decoded in the shared server.
const MaxConfigBytes = 1 << 20

// ConfigTooLarge is the error for a configuration of size bytes, over
// MaxConfigBytes, placed on its first line.
func ConfigTooLarge(file string, size int64) error {
	return ConfigErrors{{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf(
		"the file is %d bytes, over the %d-byte (1 MiB) limit for %s: remove what it does not need",
		size, MaxConfigBytes, file)}}
}

// ParseRepoConfig reads `.kilroy/config.yml`; file is its name in messages.
// The checks run in order and stop at the first stage that finds problems,
// so one mistake is reported once: YAML syntax; keys (unknown, duplicate,
// legacy); the JSON Schema; then globs, durations and the rules that relate
// keys. Problems come back as ConfigErrors in file order.
func ParseRepoConfig(file string, data []byte) (*RepoConfig, error) {
	if len(data) > MaxConfigBytes {
		return nil, ConfigTooLarge(file, int64(len(data)))
	}
	doc, err := parseDocument(file, data)
	if err != nil {
		return nil, err
	}
	sch, err := newConfigSchema()
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if err := doc.check(reflect.TypeFor[fileConfig](), sch); err != nil {
		return nil, err
	}
	var f fileConfig
	if err := doc.decode(&f); err != nil {
		return nil, err
	}
	if errs := validateFile(f); len(errs) > 0 {
		return nil, doc.placeAll(errs)
	}
	c := withDefaults(f, doc.has("pipelines"))
	placeImages(doc, c, f)
	return c, nil
}

// validateFile checks what the schema cannot express.
func validateFile(f fileConfig) []fieldError {
	var errs []fieldError
	for _, name := range sortedKeys(f.Pipelines) {
		errs = append(errs, validatePipeline(f.Pipelines[name], keyPath{"pipelines", name})...)
	}
	errs = append(errs, validateLimits(f.Limits, keyPath{"limits"})...)
	errs = append(errs, validateImage(f.Image, keyPath{"image"})...)
	return append(errs, validatePolicy(f.ArtifactPolicy, keyPath{"artifact_policy"})...)
}

func validatePipeline(p filePipeline, at keyPath) []fieldError {
	var errs []fieldError
	if name := fmt.Sprint(at[len(at)-1]); !validPipelineName(name) {
		errs = append(errs, fieldErrorf(at, "%q is not a pipeline name; use letters, digits, '-' and '_' (at most 64)", name))
	}
	if p.Graph != "" && !validRepoPath(p.Graph) {
		errs = append(errs, fieldErrorf(at.with("graph"),
			"%q is not a repository-relative path; write it like .kilroy/ci.dot", p.Graph))
	}
	errs = append(errs, validateImage(p.Image, at.with("image"))...)
	return append(errs, validateGlobs(p.On.Paths, at.with("on").with("paths"))...)
}

func validateLimits(l fileLimits, at keyPath) []fieldError {
	run, runErr := parseLimit(l.RunTimeout, at.with("run_timeout"), DefaultRunTimeout)
	node, nodeErr := parseLimit(l.NodeTimeout, at.with("node_timeout"), DefaultNodeTimeout)
	var errs []fieldError
	for _, e := range []*fieldError{runErr, nodeErr} {
		if e != nil {
			errs = append(errs, *e)
		}
	}
	if len(errs) == 0 && node > run {
		errs = append(errs, fieldErrorf(at.with("node_timeout"),
			"%s is longer than run_timeout %s; lower it or raise run_timeout", node, run))
	}
	return errs
}

// limitForms says what a limit accepts; the schema's duration description
// says the same.
const limitForms = "use a positive duration with units ms, s, m, h or d, alone or combined, such as 250ms, 90s, 15m, 1h30m or 1d"

// parseLimit reads a positive duration, or def when s is empty. Limits take
// exactly the durations pipeline attributes take (attractor.ParseDuration),
// so a value can move between a DOT file and the config unchanged. This is
// policy's one import of attractor (DESIGN.md keeps the two apart): one
// duration grammar beats two that drift; attractor imports nothing of
// policy, so no cycle can follow.
func parseLimit(s string, at keyPath, def time.Duration) (time.Duration, *fieldError) {
	if s == "" {
		return def, nil
	}
	d, err := attractor.ParseDuration(s)
	if err != nil || d <= 0 {
		what := fmt.Sprintf("invalid duration %q", s)
		if err != nil {
			what = err.Error() // says why: a missing unit, an unknown one, too long
		}
		e := fieldErrorf(at, "%s; %s", what, limitForms)
		return 0, &e
	}
	return d, nil
}

func validPipelineName(name string) bool {
	return pipelineNamePattern.MatchString(name) && len(name) <= 64
}

// validRepoPath accepts clean, slash-separated paths inside the repository.
func validRepoPath(p string) bool {
	return p != "." && fs.ValidPath(p)
}

// DefaultPipelines makes every pipeline file (repository-relative paths
// such as .kilroy/ci.dot) a pipeline named after the file, with the
// defaults. Names must be letters, digits, '-' and '_'.
func DefaultPipelines(pipelineFiles []string) (map[string]Pipeline, error) {
	pipelines := map[string]Pipeline{}
	for _, file := range slices.Sorted(slices.Values(pipelineFiles)) {
		name := strings.TrimSuffix(path.Base(file), ".dot")
		switch {
		case !validRepoPath(file) || !strings.HasSuffix(file, ".dot"):
			return nil, fmt.Errorf("pipeline file %q: want a repository-relative .dot path such as .kilroy/ci.dot", file)
		case !validPipelineName(name):
			return nil, fmt.Errorf("pipeline file %q: %q is not a pipeline name; rename the file to letters, digits, '-' and '_'", file, name)
		}
		if prev, dup := pipelines[name]; dup {
			return nil, fmt.Errorf("pipeline file %q: name %q is already used by %s", file, name, prev.Graph)
		}
		p := pipelineWithDefaults(name, filePipeline{})
		p.Graph = file
		pipelines[name] = p
	}
	return pipelines, nil
}

// DefaultRepoConfig is the configuration of a repository without
// `.kilroy/config.yml`: every pipeline file with the defaults.
func DefaultRepoConfig(pipelineFiles []string) (*RepoConfig, error) {
	pipelines, err := DefaultPipelines(pipelineFiles)
	if err != nil {
		return nil, err
	}
	c := withDefaults(fileConfig{Version: ConfigVersion}, true)
	c.Pipelines = pipelines
	return c, nil
}
