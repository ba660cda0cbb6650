package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/gc"
)

// Uninstalls. An installation deleted, or repositories removed from an
// installation, end the bot's business with that tenant: its unfinished
// runs are cancelled, and once no worker holds one of them, its mirrors,
// run directories (with their logs) and queue rows are deleted. The checks
// of the cancelled runs cannot be completed: the App has no access any
// more.

// uninstallWait bounds how long an uninstall waits for the handlers of
// its cancelled runs to return (their final push and checks fail fast
// without access); past it the event fails and the queue retries it.
const uninstallWait = 3 * time.Minute

// uninstallBy is who cancelled a tenant's runs, for logs and the queue.
const uninstallBy = "the removal of the App"

// installationChanged deletes what the bot keeps of a tenant the App lost:
// every repository of the account for installation.deleted, the removed
// ones for installation_repositories.removed. Other actions are recorded
// only.
func (s *Server) installationChanged(ctx context.Context, ev Event, log *slog.Logger) error {
	t := gc.Tenant{Repos: slices.Clone(ev.Installation.Removed)}
	switch ev.Action {
	case "deleted":
		t.Owner = ev.Installation.Account
		if t.Owner == "" {
			return errors.New("installation deleted without an account")
		}
		repos, err := s.o.Queue.ReposOfOwner(ctx, t.Owner)
		if err != nil {
			return err
		}
		t.Repos = append(t.Repos, repos...)
	case "removed":
	default:
		log.Info("event: recorded", "kind", ev.Kind, "action", ev.Action)
		return nil
	}
	t.Repos = validRepos(t.Repos, log)
	t.Caches = s.tenantCaches(ev, t.Repos)
	if err := s.forgetTenant(ctx, t, log); err != nil {
		return err
	}
	if ev.Action == "deleted" {
		return s.o.Queue.ForgetInstallation(ctx, ev.InstallationID)
	}
	return nil
}

// tenantCaches are the cache directories an uninstall deletes: the whole
// installation's, or those of the repositories removed from it.
func (s *Server) tenantCaches(ev Event, repos []string) []string {
	root := filepath.Join(s.o.DataDir, runner.CachesDir)
	if ev.Action == "deleted" {
		return []string{caches.InstallationDir(root, ev.InstallationID)}
	}
	var out []string
	for _, r := range repos {
		owner, name := splitRepo(r)
		out = append(out, caches.Dir(root, caches.ScopeRepository, ev.InstallationID, owner, name))
	}
	return out
}

// forgetTenant cancels the tenant's runs, waits for their handlers, and
// deletes its files and rows. It is idempotent: a retry after a failure
// finishes the job.
func (s *Server) forgetTenant(ctx context.Context, t gc.Tenant, log *slog.Logger) error {
	for _, repo := range t.Repos {
		cancelled, err := s.o.Queue.CancelRepo(ctx, repo, uninstallBy)
		if err != nil {
			return err
		}
		if len(cancelled) > 0 {
			log.Info("uninstall: cancelled runs", "repo", repo, "runs", len(cancelled))
		}
	}
	ids, err := s.waitUnheld(ctx, t.Repos)
	if err != nil {
		return err
	}
	t.RunIDs = ids
	removed, err := gc.RemoveTenant(s.o.DataDir, t, s.lockDrained(ctx))
	if err != nil {
		return err
	}
	for _, repo := range t.Repos {
		if _, err := s.o.Queue.ForgetRepo(ctx, repo); err != nil {
			return err
		}
	}
	log.Info("uninstall: removed the tenant's data", "owner", t.Owner, "repos", t.Repos,
		"runs", len(removed.Runs), "mirrors", removed.Mirrors, "caches", removed.Caches)
	return nil
}

// waitUnheld polls the queue until no worker holds a run of repos and
// returns the ids of all their runs.
func (s *Server) waitUnheld(ctx context.Context, repos []string) ([]string, error) {
	deadline := time.Now().Add(uninstallWait)
	for {
		var ids, held []string
		for _, repo := range repos {
			runs, err := s.o.Queue.RunsOfRepo(ctx, repo)
			if err != nil {
				return nil, err
			}
			for _, r := range runs {
				ids = append(ids, r.ID)
				if r.Owner != "" || r.Unfinished() {
					held = append(held, r.ID)
				}
			}
		}
		if len(held) == 0 {
			return ids, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("uninstall: runs %v still held after %s; retried", held, uninstallWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// validRepos keeps the names that are owner/name as GitHub spells them,
// without duplicates, so no name can reach outside the data dir's layout.
func validRepos(repos []string, log *slog.Logger) []string {
	var out []string
	for _, r := range repos {
		owner, name, ok := strings.Cut(r, "/")
		if !ok || !validName(owner) || !validName(name) {
			log.Warn("uninstall: not a repository name; ignored", "repo", r)
			continue
		}
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, r) }) {
			out = append(out, r)
		}
	}
	return out
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c == '-' || c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
