package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// ConfigPath is the repository configuration file.
const ConfigPath = ".kilroy/config.yml"

// Selection is the pipeline a run executes, read from one commit: what
// SelectPipeline, LoadPipeline and ParsePipeline return and Assemble
// prepares a run of.
type Selection struct {
	// Name is the pipeline's name in the configuration.
	Name string
	// GraphPath is the repository-relative path of its DOT file.
	GraphPath string
	source    []byte
	// Pipeline is the validated graph, with the configured node timeout
	// applied to nodes that set none.
	Pipeline *attractor.Pipeline
	diags    attractor.Diagnostics
	// Config is the repository configuration the pipeline was read with;
	// its Limits and artifact policy apply to the run.
	Config *policy.RepoConfig
}

// SelectPipeline reads the configuration and the chosen pipeline from
// commit rev: what runs is what the commit holds. opts go to
// attractor.Load (a server's graph caps).
func SelectPipeline(ctx context.Context, git *gitops.Git, repo, rev, want string, opts ...attractor.LoadOption) (*Selection, error) {
	cfg, err := LoadRepoConfig(ctx, git, repo, rev)
	if err != nil {
		return nil, err
	}
	name, pl, err := choosePipeline(cfg, want)
	if err != nil {
		return nil, err
	}
	return LoadPipeline(ctx, git, repo, rev, cfg, name, pl, opts...)
}

// LoadPipeline reads and validates one configured pipeline's graph from
// commit rev of repo. A pipeline that does not validate is an
// *InvalidPipelineError; a graph missing from the commit is ErrUsage.
func LoadPipeline(ctx context.Context, git *gitops.Git, repo, rev string, cfg *policy.RepoConfig, name string, pl policy.Pipeline, opts ...attractor.LoadOption) (*Selection, error) {
	src, err := git.ReadFileAt(ctx, repo, rev, pl.Graph, attractor.MaxSourceBytes)
	if errors.Is(err, gitops.ErrNotInCommit) {
		return nil, fmt.Errorf("%w: pipeline %q: %s is not in commit %s: commit the file, or fix `graph:` in %s",
			ErrUsage, name, pl.Graph, short(rev), ConfigPath)
	}
	if tl, ok := errors.AsType[*gitops.TooLargeError](err); ok {
		d := attractor.SourceTooLarge(pl.Graph, tl.Size)
		return nil, &InvalidPipelineError{File: pl.Graph, Diagnostics: attractor.Diagnostics{d}, Err: errors.New(d.Message)}
	}
	if err != nil {
		return nil, err
	}
	return ParsePipeline(cfg, name, pl, src, opts...)
}

// ParsePipeline validates the graph source src of pipeline name as
// configured by cfg and pl.
func ParsePipeline(cfg *policy.RepoConfig, name string, pl policy.Pipeline, src []byte, opts ...attractor.LoadOption) (*Selection, error) {
	p, diags, err := attractor.Load(pl.Graph, src, opts...)
	if err != nil {
		return nil, &InvalidPipelineError{File: pl.Graph, Diagnostics: diags, Err: err}
	}
	applyLimits(p, cfg.Limits)
	return &Selection{Name: name, GraphPath: pl.Graph, source: src, Pipeline: p, diags: diags, Config: cfg}, nil
}

// InvalidPipelineError carries the diagnostics of a pipeline that does not
// validate, so the caller can print them the way `validate` does.
type InvalidPipelineError struct {
	File        string
	Diagnostics attractor.Diagnostics
	Err         error
}

func (e *InvalidPipelineError) Error() string {
	return fmt.Sprintf("%s does not validate (%s): run `kilroy-bot validate %s`", e.File, e.Err, e.File)
}

func (e *InvalidPipelineError) Unwrap() []error { return []error{ErrUsage, e.Err} }

// LoadRepoConfig reads the configuration at commit rev of repo; without
// configured pipelines every .kilroy/*.dot is one. A commit without any
// pipeline is a *NoPipelinesError, an invalid configuration ErrUsage.
func LoadRepoConfig(ctx context.Context, git *gitops.Git, repo, rev string) (*policy.RepoConfig, error) {
	cfg, err := readRepoConfig(ctx, git, repo, rev)
	if err != nil || cfg.Pipelines != nil {
		return cfg, err
	}
	return withDefaultPipelines(ctx, git, repo, rev, cfg)
}

// readRepoConfig reads the configuration at rev, the defaults when the
// commit has none. Pipelines is nil unless the file configures them.
func readRepoConfig(ctx context.Context, git *gitops.Git, repo, rev string) (*policy.RepoConfig, error) {
	data, err := git.ReadFileAt(ctx, repo, rev, ConfigPath, policy.MaxConfigBytes)
	if tl, ok := errors.AsType[*gitops.TooLargeError](err); ok {
		return nil, fmt.Errorf("%w: %w", ErrUsage, policy.ConfigTooLarge(ConfigPath, tl.Size))
	}
	if err == nil {
		cfg, err := policy.ParseRepoConfig(ConfigPath, data)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		return cfg, nil
	}
	if !errors.Is(err, gitops.ErrNotInCommit) {
		return nil, err
	}
	cfg, err := policy.DefaultRepoConfig(nil)
	if err != nil {
		return nil, err
	}
	cfg.Pipelines = nil
	return cfg, nil
}

func withDefaultPipelines(ctx context.Context, git *gitops.Git, repo, rev string, cfg *policy.RepoConfig) (*policy.RepoConfig, error) {
	files, err := git.ListFilesAt(ctx, repo, rev, ".kilroy")
	if err != nil {
		return nil, err
	}
	var dots []string
	for _, f := range files {
		if strings.HasSuffix(f, ".dot") {
			dots = append(dots, f)
		}
	}
	if len(dots) == 0 {
		return nil, &NoPipelinesError{Rev: rev}
	}
	pipelines, err := policy.DefaultPipelines(dots)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	cfg.Pipelines = pipelines
	return cfg, nil
}

// NoPipelinesError says a commit has no pipeline at all: no
// `.kilroy/*.dot` and no configured one. On a pull request that means the
// repository does not use kilroy, which is not an error to report there.
type NoPipelinesError struct{ Rev string }

func (e *NoPipelinesError) Error() string {
	return fmt.Sprintf("%s: commit %s has no .kilroy/*.dot pipeline: add one (kilroy-bot validate checks it) and commit it", ErrUsage, short(e.Rev))
}

func (e *NoPipelinesError) Unwrap() error { return ErrUsage }

// choosePipeline picks by name or graph path; with nothing asked it takes
// `ci`, else the only pipeline.
func choosePipeline(cfg *policy.RepoConfig, want string) (string, policy.Pipeline, error) {
	names := slices.Sorted(maps.Keys(cfg.Pipelines))
	if want == "" {
		if pl, ok := cfg.Pipelines["ci"]; ok {
			return "ci", pl, nil
		}
		if len(names) == 1 {
			return names[0], cfg.Pipelines[names[0]], nil
		}
		return "", policy.Pipeline{}, fmt.Errorf("%w: several pipelines (%s): choose one with --graph NAME", ErrUsage, strings.Join(names, ", "))
	}
	if pl, ok := cfg.Pipelines[want]; ok {
		return want, pl, nil
	}
	clean := path.Clean(strings.TrimPrefix(want, "./"))
	for _, n := range names {
		if cfg.Pipelines[n].Graph == clean {
			return n, cfg.Pipelines[n], nil
		}
	}
	msg := fmt.Sprintf("no pipeline %q (pipelines: %s)", want, strings.Join(names, ", "))
	if s := attractor.Suggest(want, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return "", policy.Pipeline{}, fmt.Errorf("%w: %s", ErrUsage, msg)
}

// applyLimits gives nodes without their own timeout the configured node
// timeout.
func applyLimits(p *attractor.Pipeline, l policy.Limits) {
	if l.NodeTimeout <= 0 {
		return
	}
	for _, n := range p.Nodes {
		if n.Timeout == 0 {
			n.Timeout = l.NodeTimeout
		}
	}
}
