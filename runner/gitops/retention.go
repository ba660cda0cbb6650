package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// What the retention sweep (runner/gc) needs of git: the run branches of a
// mirror and of its remote, deleting them there, the worktrees a mirror
// still has, and a collection that really drops the objects of deleted
// branches.

// RunBranchRef is one run branch: its name (kilroy/run/<pipeline>/<run-id>),
// tip and, when the tip is in the repository, its committer time (the
// run's last checkpoint).
type RunBranchRef struct {
	Branch    string
	SHA       string
	Committed time.Time
}

// RunBranches lists the run branches of repository dir.
func (g *Git) RunBranches(ctx context.Context, dir string) ([]RunBranchRef, error) {
	out, err := g.run(ctx, call{dir: dir, readOnly: true, pinned: true, args: []string{"--git-dir=" + dir,
		"for-each-ref", "--format=%(refname)%00%(objectname)%00%(committerdate:unix)", "refs/heads/" + runBranchPrefix}})
	if err != nil {
		return nil, fmt.Errorf("gitops: run branches of %s: %w", dir, err)
	}
	var refs []RunBranchRef
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte{'\n'}) {
		f := bytes.Split(line, []byte{0})
		if len(f) != 3 {
			continue
		}
		r := RunBranchRef{Branch: strings.TrimPrefix(string(f[0]), "refs/heads/"), SHA: string(f[1])}
		if sec, err := strconv.ParseInt(string(f[2]), 10, 64); err == nil && sec > 0 {
			r.Committed = time.Unix(sec, 0)
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// LinkedWorktrees prunes the registrations of worktrees whose directory is
// gone and lists the linked worktrees of repository dir that remain.
func (g *Git) LinkedWorktrees(ctx context.Context, dir string) ([]string, error) {
	if err := g.prune(ctx, dir); err != nil {
		return nil, err
	}
	trees, err := g.listWorktrees(ctx, dir)
	if err != nil {
		return nil, err
	}
	return trees[1:], nil
}

// CollectMirror repacks the bare mirror at dir and prunes its unreachable
// objects older than expire (0: every one), so the objects only a deleted
// branch held really leave the disk. Reflogs of deleted refs go with
// them; a bare mirror keeps none of its own (core.logAllRefUpdates).
//
// Expire 0 is safe only while nothing writes objects into the mirror:
// the caller holds the lock of its fetches and worktree creation and the
// mirror has no linked worktree (see MaintainMirror on why).
func (g *Git) CollectMirror(ctx context.Context, dir string, expire time.Duration) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("gitops: mirror dir: %w", err)
	}
	defer g.mirrorLocks.lock(dir)()
	prune := "now"
	if expire > 0 {
		prune = strconv.FormatInt(int64(expire/time.Second), 10) + ".seconds.ago"
	}
	_, err = g.run(ctx, call{dir: dir, pinned: true, args: []string{"--git-dir=" + dir,
		"-c", "gc.cruftPacks=true", "-c", "gc.reflogExpireUnreachable=now",
		"gc", "--quiet", "--prune=" + prune}})
	if err != nil {
		return fmt.Errorf("gitops: gc of mirror %s: %w", dir, err)
	}
	return nil
}

// RemoteRunBranches lists the run branches on the remote at remoteURL,
// with a freshly fetched token; Committed is zero (the remote does not
// say). dir is any repository to run git in, such as the mirror.
func (g *Git) RemoteRunBranches(ctx context.Context, dir, remoteURL string) ([]RunBranchRef, error) {
	if err := checkRemoteURL(remoteURL); err != nil {
		return nil, err
	}
	c := call{dir: dir, readOnly: true, args: []string{"ls-remote", "--refs", "--", remoteURL, "refs/heads/" + runBranchPrefix + "*"}}
	c, err := g.withAuth(ctx, c, remoteURL)
	if err != nil {
		return nil, err
	}
	out, err := g.runStr(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("gitops: ls-remote %s: %w", remoteURL, err)
	}
	var refs []RunBranchRef
	for _, line := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(line, "\t")
		branch, inNamespace := strings.CutPrefix(name, "refs/heads/")
		if ok && inNamespace && strings.HasPrefix(branch, runBranchPrefix) {
			refs = append(refs, RunBranchRef{Branch: branch, SHA: sha})
		}
	}
	return refs, nil
}

// DeleteRemoteRunBranch deletes run branch on the remote at remoteURL if
// it still points at sha (a push with --force-with-lease), with a freshly
// fetched token. Only branches in the bot's namespace are deleted. A
// branch already gone is not an error, so two sweeps may both try.
func (g *Git) DeleteRemoteRunBranch(ctx context.Context, dir, remoteURL, branch, sha string) error {
	if err := checkRemoteURL(remoteURL); err != nil {
		return err
	}
	if err := g.checkRunBranch(ctx, dir, branch); err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	c := call{dir: dir, args: []string{"push", "--porcelain", "--no-verify", "--force-with-lease=" + ref + ":" + sha,
		"--", remoteURL, ":" + ref}}
	c, err := g.withAuth(ctx, c, remoteURL)
	if err != nil {
		return err
	}
	_, pushErr := g.run(ctx, c)
	if pushErr == nil {
		return nil
	}
	tip, err := g.remoteTip(ctx, dir, remoteURL, ref)
	if err == nil && tip == "" {
		return nil
	}
	return fmt.Errorf("gitops: delete %s on %s: %w", branch, remoteURL, errors.Join(pushErr, err))
}
