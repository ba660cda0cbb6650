package ghapp

import (
	"context"

	"github.com/google/go-github/v92/github"
)

// Installation is one installation of the App and what it grants.
type Installation struct {
	ID      int64
	Account string
	// Permissions are GitHub's permission names to "read" or "write", as
	// the installation's owner approved them (which may lag what the App
	// asks for until they approve a change).
	Permissions map[string]string
}

// Installations lists every installation of the App (GET
// /app/installations, as the App), with the permissions each grants.
func (a *App) Installations(ctx context.Context) ([]Installation, error) {
	var out []Installation
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := a.api.Apps.ListInstallations(ctx, opts)
		if err != nil {
			return nil, a.apiError("list the App's installations", Repo{}, err, ErrNotFound)
		}
		for _, in := range page {
			out = append(out, Installation{ID: in.GetID(), Account: in.GetAccount().GetLogin(),
				Permissions: permissionsOf(in.GetPermissions())})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// permissionsOf reads the permissions this package names (Permissions).
func permissionsOf(p *github.InstallationPermissions) map[string]string {
	out := map[string]string{}
	if p == nil {
		return out
	}
	for name, level := range map[string]*string{
		"checks": p.Checks, "contents": p.Contents, "pull_requests": p.PullRequests,
		"issues": p.Issues, "metadata": p.Metadata, MergeQueuePermission: p.MergeQueues,
	} {
		if level != nil && *level != "" && *level != "none" {
			out[name] = *level
		}
	}
	return out
}
