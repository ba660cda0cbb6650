package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Push publishes branch from dir (a worktree or the repository holding the
// branch) to remoteURL, with a freshly fetched token.
//
// Run branches belong to their run, and the bot's local branch is the
// record of it: after a resume the local branch may legitimately have
// diverged from what an earlier attempt pushed. So a first, fast-forward
// push that the remote rejects (non-fast-forward, fetch first, stale info)
// is retried once after reading the remote's current tip, with
// --force-with-lease pinned to exactly that tip. A concurrent update
// between the two steps makes the retry fail instead of being overwritten.
func (g *Git) Push(ctx context.Context, dir, remoteURL, branch string) error {
	if err := checkRemoteURL(remoteURL); err != nil {
		return err
	}
	if err := g.checkRunBranch(ctx, dir, branch); err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	rejected, err := g.push(ctx, dir, remoteURL, ref, "")
	if err != nil || !rejected {
		return err
	}
	tip, err := g.remoteTip(ctx, dir, remoteURL, ref)
	if err != nil {
		return fmt.Errorf("gitops: push %s rejected; reading the remote tip: %w", branch, err)
	}
	rejected, err = g.push(ctx, dir, remoteURL, ref, "--force-with-lease="+ref+":"+tip)
	if err != nil {
		return err
	}
	if rejected {
		return fmt.Errorf("gitops: push %s to %s rejected twice: the remote branch changed while pushing", branch, remoteURL)
	}
	return nil
}

// push runs one git push and reports whether the remote rejected the ref
// for a reason a retry against the current tip can fix.
func (g *Git) push(ctx context.Context, dir, remoteURL, ref, lease string) (rejected bool, err error) {
	args := []string{"push", "--porcelain", "--no-verify"}
	if lease != "" {
		args = append(args, lease)
	}
	c := call{dir: dir, args: append(args, "--", remoteURL, ref+":"+ref)}
	if c, err = g.withAuth(ctx, c, remoteURL); err != nil {
		return false, err
	}
	out, err := g.run(ctx, c)
	var gerr *Error
	if errors.As(err, &gerr) && gerr.cause == nil && isRetryableRejection(string(out)) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("gitops: push %s to %s: %w", ref, remoteURL, err)
	}
	return false, nil
}

// isRetryableRejection reads `git push --porcelain` output, whose rejected
// lines look like "!\tSRC:DST\t[rejected] (non-fast-forward)".
func isRetryableRejection(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "!\t") || !strings.Contains(line, "\t[rejected]") {
			continue
		}
		for _, why := range []string{"(non-fast-forward)", "(fetch first)", "(stale info)"} {
			if strings.Contains(line, why) {
				return true
			}
		}
	}
	return false
}

// remoteTip asks the remote for ref's current SHA (the ref advertisement
// of a fetch, without writing FETCH_HEAD or refs in a repository shared by
// concurrent runs). "" means the ref does not exist, which
// --force-with-lease=REF: turns into "must still not exist".
func (g *Git) remoteTip(ctx context.Context, dir, remoteURL, ref string) (string, error) {
	c := call{dir: dir, readOnly: true, args: []string{"ls-remote", "--refs", "--", remoteURL, ref}}
	c, err := g.withAuth(ctx, c, remoteURL)
	if err != nil {
		return "", err
	}
	out, err := g.runStr(ctx, c)
	if err != nil {
		return "", fmt.Errorf("gitops: ls-remote %s %s: %w", remoteURL, ref, err)
	}
	for _, line := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(line, "\t")
		if ok && name == ref {
			return sha, nil
		}
	}
	return "", nil
}
