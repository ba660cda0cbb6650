package ghapp

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"
)

// TokenSource returns a credential for git, called right before each
// fetch and push so that an hour-long token never expires mid-run. It has
// the shape runner/gitops asks for.
type TokenSource func(ctx context.Context) (string, error)

// RepoTokens hands out tokens for one repository during one run and
// revokes every one of them when the run ends. A token is reused while it
// has more than renewBefore to live, so a run of many pushes mints few.
type RepoTokens struct {
	app          *App
	installation int64
	repo         string
	perms        map[string]string

	mu     sync.Mutex
	cur    Token
	issued []Token
}

// RepoTokens prepares tokens for repoName in the installation with perms
// (nil: GitPermissions). Nothing is minted until the first Token call.
func (a *App) RepoTokens(installationID int64, repoName string, perms map[string]string) *RepoTokens {
	return &RepoTokens{app: a, installation: installationID, repo: repoName, perms: maps.Clone(perms)}
}

// Token returns a live token value for the repository.
func (r *RepoTokens) Token(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur.fresh(r.app.policy.now()) {
		return r.cur.Value, nil
	}
	// Minted to the end even when ctx ends meanwhile (a run's background
	// push stopped as the run finishes): GitHub may already have issued the
	// token, and one not recorded here is never revoked. mintTimeout still
	// bounds it.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mintTimeout)
	defer cancel()
	tok, err := r.app.RepoToken(mctx, r.installation, r.repo, r.perms)
	if err != nil {
		return "", err
	}
	r.cur = tok
	r.issued = append(r.issued, tok)
	if err := context.Cause(ctx); err != nil {
		return "", err // recorded for Revoke; the caller has gone
	}
	return tok.Value, nil
}

// mintTimeout bounds minting one repository token, retries included.
const mintTimeout = 2 * time.Minute

// Source is Token as a TokenSource.
func (r *RepoTokens) Source() TokenSource { return r.Token }

// Revoke revokes every token handed out so far. Call it when the run ends,
// with a context that outlives the run's own cancellation.
func (r *RepoTokens) Revoke(ctx context.Context) error {
	r.mu.Lock()
	issued := r.issued
	r.issued, r.cur = nil, Token{}
	r.mu.Unlock()
	var errs []error
	for _, tok := range issued {
		errs = append(errs, r.app.RevokeToken(ctx, tok))
	}
	return errors.Join(errs...)
}
