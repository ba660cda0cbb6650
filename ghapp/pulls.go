package ghapp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v92/github"
)

// PullRequest is what the bot needs to know about a pull request.
type PullRequest struct {
	Number   int
	State    string // open, closed
	Draft    bool
	Title    string
	Author   string // login
	HeadSHA  string
	HeadRef  string
	HeadRepo string // "owner/name"; another repository for a fork
	BaseRef  string
	BaseSHA  string
	BaseRepo string // "owner/name"
}

// FromFork reports whether the head lives in another repository than the
// base, which decides whether a run may start without approval.
func (p PullRequest) FromFork() bool { return !strings.EqualFold(p.HeadRepo, p.BaseRepo) }

// PullRequest fetches pull request n.
func (c *Client) PullRequest(ctx context.Context, repo Repo, n int) (PullRequest, error) {
	op := fmt.Sprintf("get pull request #%d", n)
	gh, err := c.api()
	if err != nil {
		return PullRequest{}, err
	}
	pr, _, err := gh.PullRequests.Get(ctx, repo.Owner, repo.Name, n)
	if err != nil {
		return PullRequest{}, c.fail(op, repo, err)
	}
	head, base := pr.GetHead(), pr.GetBase()
	return PullRequest{
		Number: pr.GetNumber(), State: pr.GetState(), Draft: pr.GetDraft(), Title: pr.GetTitle(),
		Author:  pr.GetUser().GetLogin(),
		HeadSHA: head.GetSHA(), HeadRef: head.GetRef(), HeadRepo: head.GetRepo().GetFullName(),
		BaseSHA: base.GetSHA(), BaseRef: base.GetRef(), BaseRepo: base.GetRepo().GetFullName(),
	}, nil
}

// PullRequestFiles lists the paths pull request n changes, across all
// pages (GitHub lists at most 3000).
func (c *Client) PullRequestFiles(ctx context.Context, repo Repo, n int) ([]string, error) {
	op := fmt.Sprintf("list files of pull request #%d", n)
	gh, err := c.api()
	if err != nil {
		return nil, err
	}
	files, err := collect(ctx, func(lo github.ListOptions) ([]*github.CommitFile, *github.Response, error) {
		return gh.PullRequests.ListFiles(ctx, repo.Owner, repo.Name, n, &lo)
	})
	if err != nil {
		return nil, c.fail(op, repo, err)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.GetFilename()
	}
	return paths, nil
}

// CollaboratorPermission is user's permission on the repository: admin,
// write, read or none. It is GitHub's "permission" field, which folds
// maintain into write and triage into read (custom roles likewise fold into
// their base), so "write or more" is the test for trust; role_name is not
// used because custom role names say nothing about access. A user GitHub
// does not know (404) has none.
func (c *Client) CollaboratorPermission(ctx context.Context, repo Repo, user string) (string, error) {
	op := fmt.Sprintf("get permission of %s", user)
	gh, err := c.api()
	if err != nil {
		return "", err
	}
	lvl, _, err := gh.Repositories.GetPermissionLevel(ctx, repo.Owner, repo.Name, user)
	if err != nil {
		err = c.fail(op, repo, err)
		if errors.Is(err, ErrNotFound) {
			return "none", nil
		}
		return "", err
	}
	if p := lvl.GetPermission(); p != "" {
		return p, nil
	}
	return "none", nil
}
