package ghapp

import (
	"context"
	"fmt"

	"github.com/google/go-github/v92/github"
)

// CreateComment comments on issue or pull request n and returns the
// comment's id. A 5xx is not retried: the comment may already exist, and
// a reply posted twice is worse than one the caller reports as failed.
func (c *Client) CreateComment(ctx context.Context, repo Repo, n int, body string) (int64, error) {
	op := fmt.Sprintf("comment on #%d", n)
	gh, err := c.api()
	if err != nil {
		return 0, err
	}
	cm, _, err := gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, n, github.IssueCommentRequest{Body: body})
	if err != nil {
		return 0, c.fail(op, repo, err)
	}
	return cm.GetID(), nil
}

// AddReaction reacts to an issue comment with content ("eyes", "+1", …).
// GitHub keeps one reaction per user and content, so a repeat is harmless
// and the request is retried like a read.
func (c *Client) AddReaction(ctx context.Context, repo Repo, commentID int64, content string) error {
	op := fmt.Sprintf("react %q to comment %d", content, commentID)
	gh, err := c.api()
	if err != nil {
		return err
	}
	if _, _, err := gh.Reactions.CreateIssueCommentReaction(repeatable(ctx), repo.Owner, repo.Name, commentID, content); err != nil {
		return c.fail(op, repo, err)
	}
	return nil
}
