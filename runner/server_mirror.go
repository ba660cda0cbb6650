package runner

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// fetched is what fetchPR brought into the mirror.
type fetched struct {
	mirror  string
	baseSHA string // the base branch's tip
}

// fetchPR brings a pull request's head commit and its base branch into
// the repository's mirror, with a token fetched right before. The head
// comes through refs/pull/<n>/head, which also holds fork heads; a SHA
// the ref no longer points at (a re-run of an older push) is fetched by
// id.
func (s *Server) fetchPR(ctx context.Context, git *gitops.Git, repo Repo, pr int, headSHA, baseRef string) (fetched, error) {
	mirror := s.mirrorDir(repo)
	defer s.mirrorLocks.lock(mirror)()
	if err := git.EnsureMirror(ctx, mirror, repo.CloneURL); err != nil {
		return fetched{}, err
	}
	baseSpec := "+refs/heads/" + baseRef + ":refs/remotes/origin/" + baseRef
	pull := "refs/pull/" + strconv.Itoa(pr) + "/head"
	if err := git.Fetch(ctx, mirror, repo.CloneURL, baseSpec, "+"+pull+":refs/remotes/pull/"+strconv.Itoa(pr)+"/head"); err != nil {
		// Some hosts do not serve refs/pull; the base alone still helps.
		if err := git.Fetch(ctx, mirror, repo.CloneURL, baseSpec); err != nil {
			return fetched{}, err
		}
	}
	if headSHA != "" {
		if _, err := git.ResolveRef(ctx, mirror, headSHA); err != nil {
			if err := git.Fetch(ctx, mirror, repo.CloneURL, headSHA); err != nil {
				return fetched{}, fmt.Errorf("fetch head %s of %s#%d: %w", short(headSHA), repo.FullName, pr, err)
			}
		}
	}
	base, err := git.ResolveRef(ctx, mirror, "refs/remotes/origin/"+baseRef)
	if err != nil {
		return fetched{}, fmt.Errorf("base branch %s of %s: %w", baseRef, repo.FullName, err)
	}
	return fetched{mirror: mirror, baseSHA: base}, nil
}
