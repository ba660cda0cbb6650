package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// selectLocal is selectPipeline for `kilroy-bot run`, where --graph may
// also be the path of any .dot file in the commit, configured or not:
// trying a pipeline out locally should not need an edit of config.yml
// first. An unconfigured file runs as the pipeline named after it, with
// the default settings and the configuration's policy and limits. Pull
// request runs only ever run configured pipelines.
func selectLocal(ctx context.Context, git *gitops.Git, repo, rev, want string) (*Selection, error) {
	file, ok := graphFile(repo, want)
	if !ok {
		return SelectPipeline(ctx, git, repo, rev, want)
	}
	cfg, err := readRepoConfig(ctx, git, repo, rev)
	if err != nil {
		return nil, err
	}
	for name, pl := range cfg.Pipelines {
		if pl.Graph == file {
			return LoadPipeline(ctx, git, repo, rev, cfg, name, pl)
		}
	}
	one, err := policy.DefaultPipelines([]string{file})
	if err != nil {
		return nil, fmt.Errorf("%w: --graph %s: %w", ErrUsage, want, err)
	}
	name := strings.TrimSuffix(path.Base(file), ".dot")
	src, err := git.ReadFileAt(ctx, repo, rev, file, attractor.MaxSourceBytes)
	if tl, ok := errors.AsType[*gitops.TooLargeError](err); ok {
		d := attractor.SourceTooLarge(file, tl.Size)
		return nil, &InvalidPipelineError{File: file, Diagnostics: attractor.Diagnostics{d}, Err: errors.New(d.Message)}
	}
	if errors.Is(err, gitops.ErrNotInCommit) {
		msg := fmt.Sprintf("--graph %s: %s is not in commit %s (runs read pipelines from HEAD): check the path, or commit the file", want, file, short(rev))
		if s := nearbyGraph(ctx, git, repo, rev, file); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, fmt.Errorf("%w: %s", ErrUsage, msg)
	}
	if err != nil {
		return nil, err
	}
	return ParsePipeline(cfg, name, one[name], src)
}

// nearbyGraph suggests a .dot file of commit rev: the one of the same
// name in .kilroy/ (--graph ci.dot for .kilroy/ci.dot), else a near miss
// in the directory file names; "" when none is close.
func nearbyGraph(ctx context.Context, git *gitops.Git, repo, rev, file string) string {
	kilroy := dotFiles(ctx, git, repo, rev, ".kilroy")
	if f := path.Join(".kilroy", path.Base(file)); slices.Contains(kilroy, f) {
		return f
	}
	return attractor.Suggest(file, dotFiles(ctx, git, repo, rev, path.Dir(file)))
}

// dotFiles lists the .dot files directly in dir at rev; none when the
// directory is not in the commit.
func dotFiles(ctx context.Context, git *gitops.Git, repo, rev, dir string) []string {
	files, err := git.ListFilesAt(ctx, repo, rev, dir)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(files, func(f string) bool { return !strings.HasSuffix(f, ".dot") })
}

// graphFile turns --graph into a slash-separated repository-relative path
// when it names a .dot file: relative to the repository root, or absolute
// inside the repository.
func graphFile(repo, want string) (string, bool) {
	if !strings.HasSuffix(want, ".dot") {
		return "", false
	}
	if filepath.IsAbs(want) {
		rel, err := filepath.Rel(repo, want)
		if err != nil {
			return "", false
		}
		want = rel
	}
	return path.Clean(filepath.ToSlash(want)), true
}
