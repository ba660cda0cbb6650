package server

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
// id. Then, still under the mirror's lock, the mirror is collected when
// the fetches left it too many loose objects or packs (maintain).
func (s *Server) fetchPR(ctx context.Context, git *gitops.Git, repo Repo, pr int, headSHA, baseRef string) (fetched, error) {
	mirror := s.mirrorDir(repo)
	defer s.mirrorLocks.lock(mirror)()
	if err := git.EnsureMirror(ctx, mirror, repo.CloneURL); err != nil {
		return fetched{}, err
	}
	s.markMirror(mirror, repo)
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
	s.maintain(ctx, git, repo, mirror)
	return fetched{mirror: mirror, baseSHA: base}, nil
}

// maintain runs git's garbage collection on a mirror that needs it, since
// the bot's git never collects on its own. The caller holds the mirror's
// lock, which runs also take to make (or, resuming, remake) their
// worktrees from the mirror, so gc never runs while one is being created.
// (Parallel-branch worktrees made mid-run do not take it; gc is safe
// beside them as beside any git command, see gitops.MaintainMirror.) A
// failure is only logged: the fetch succeeded, and the next one retries.
func (s *Server) maintain(ctx context.Context, git *gitops.Git, repo Repo, mirror string) {
	m, err := git.MaintainMirror(ctx, mirror)
	if err != nil {
		s.log.Warn("mirror: garbage collection failed", "repo", repo.FullName, "err", err)
		return
	}
	if m.Collected {
		s.log.Info("mirror: collected garbage", "repo", repo.FullName,
			"loose_objects", m.Before.Loose, "packs", m.Before.Packs)
	}
}
