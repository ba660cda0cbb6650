package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// authorEnv returns the author override for a commit in dir: with
// Options.RepoIdentity, the repository's own user.name and user.email when
// both are set. Only repository-level config counts (global and system
// config are never read), and nothing is written. The committer is always
// the bot, so a checkpoint says who made it either way.
func (g *Git) authorEnv(ctx context.Context, dir string) ([]string, error) {
	if !g.opts.RepoIdentity {
		return nil, nil
	}
	// Read once per worktree: the repository's identity does not change
	// during a run, and a git process per checkpoint is measurable.
	if env, ok := g.identities.Load(dir); ok {
		return env.([]string), nil
	}
	env, err := g.readAuthor(ctx, dir)
	if err == nil {
		g.identities.Store(dir, env)
	}
	return env, err
}

func (g *Git) readAuthor(ctx context.Context, dir string) ([]string, error) {
	out, err := g.runStr(ctx, call{dir: dir, pinned: true, readOnly: true,
		args: []string{"config", "--get-regexp", `^user\.(name|email)$`}})
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 && gerr.cause == nil {
		return nil, nil // neither is set
	}
	if err != nil {
		return nil, fmt.Errorf("gitops: read repository identity in %s: %w", dir, err)
	}
	var id Identity
	for _, line := range strings.Split(out, "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "user.name":
			id.Name = val
		case "user.email":
			id.Email = val
		}
	}
	if id.Name == "" || id.Email == "" {
		return nil, nil
	}
	return []string{"GIT_AUTHOR_NAME=" + id.Name, "GIT_AUTHOR_EMAIL=" + id.Email}, nil
}
