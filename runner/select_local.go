package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
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
func selectLocal(ctx context.Context, git *gitops.Git, repo, rev, want string) (*selection, error) {
	file, ok := graphFile(repo, want)
	if !ok {
		return selectPipeline(ctx, git, repo, rev, want)
	}
	cfg, err := readRepoConfig(ctx, git, repo, rev)
	if err != nil {
		return nil, err
	}
	for name, pl := range cfg.Pipelines {
		if pl.Graph == file {
			return loadPipeline(ctx, git, repo, rev, cfg, name, pl)
		}
	}
	one, err := policy.DefaultPipelines([]string{file})
	if err != nil {
		return nil, fmt.Errorf("%w: --graph %s: %w", ErrUsage, want, err)
	}
	name := strings.TrimSuffix(path.Base(file), ".dot")
	src, err := git.ReadFileAt(ctx, repo, rev, file)
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
	return parsePipeline(cfg, name, one[name], src)
}

// nearbyGraph suggests a .dot file of commit rev in the directory file
// names, "" when none is close.
func nearbyGraph(ctx context.Context, git *gitops.Git, repo, rev, file string) string {
	files, err := git.ListFilesAt(ctx, repo, rev, path.Dir(file))
	if err != nil {
		return "" // the directory is not in the commit either
	}
	var dots []string
	for _, f := range files {
		if strings.HasSuffix(f, ".dot") {
			dots = append(dots, f)
		}
	}
	return attractor.Suggest(file, dots)
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
