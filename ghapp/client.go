package ghapp

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v92/github"
)

// maxPages bounds every listing; GitHub itself stops at 3000 files for a
// pull request (30 pages of 100).
const maxPages = 50

// Client calls GitHub as one installation. Make one per event with
// App.Installation; it shares the App's token cache, write lock and
// rate-limit pause for that installation.
type Client struct {
	app *App
	id  int64
	gh  *github.Client
	err error // why gh could not be built; returned by every call
}

// Installation returns a Client for the installation. It makes no request:
// the token is fetched (or taken from the App's cache) on the first call,
// with that call's context. ctx is not kept.
func (a *App) Installation(ctx context.Context, installationID int64) *Client {
	_ = ctx // accepted for symmetry with the other constructors of per-event state
	in := a.state(installationID)
	auth := &installationAuth{app: a, inst: in}
	gh, err := a.newGitHub(&retrying{policy: &a.policy, inst: in, next: hostOnly(a.baseURL, auth, a.base)})
	return &Client{app: a, id: installationID, gh: gh, err: err}
}

// InstallationID is the installation the Client acts as.
func (c *Client) InstallationID() int64 { return c.id }

func (c *Client) fail(op string, repo Repo, err error) error {
	return c.app.apiError(op, repo, err, nil)
}

// api is the go-github client, or the error that kept it from being made
// (NewApp has checked everything that could fail, so this is defensive).
func (c *Client) api() (*github.Client, error) {
	if c.err != nil {
		return nil, fmt.Errorf("ghapp: installation %d client: %w", c.id, c.err)
	}
	return c.gh, nil
}

// collect gathers every page of a listing, 100 items a page.
func collect[T any](ctx context.Context, list func(opts github.ListOptions) ([]T, *github.Response, error)) ([]T, error) {
	var all []T
	opts := github.ListOptions{PerPage: 100}
	for range maxPages {
		items, resp, err := list(opts)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if resp == nil || resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("more than 50 pages")
}
