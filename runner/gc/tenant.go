package gc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tenant names what an uninstall removes from a server's data dir.
type Tenant struct {
	// Owner, when set, is an account the App was uninstalled from: every
	// mirror under mirrors/<owner>/ goes (compared without case, as
	// GitHub compares logins).
	Owner string
	// Repos are repositories (owner/name) removed from the installation.
	Repos []string
	// RunIDs are the runs the queue knows of them. Run directories whose
	// checkpoint names one of the tenant's mirrors go too.
	RunIDs []string
	// Caches are the tenant's cache directories under caches/ (an
	// installation's, or its removed repositories'; runner/caches).
	Caches []string
}

// TenantRemoved is what RemoveTenant deleted.
type TenantRemoved struct {
	Runs    []string // run ids
	Mirrors []string // owner/name
	Caches  []string // cache directories, relative to caches/
}

// RemoveTenant deletes the tenant's run directories and mirrors from
// dataDir, each mirror under lock (see SweepOptions.LockMirror; nil for
// none). The caller has made sure none of its runs is active. Only
// directories in the data dir's layout are touched: runs/<run-id> and
// mirrors/<owner>/<name>.git. Removing what is already gone succeeds.
func RemoveTenant(dataDir string, t Tenant, lock func(dir string) func()) (TenantRemoved, error) {
	var res TenantRemoved
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return res, fmt.Errorf("gc: data dir: %w", err)
	}
	all, err := listMirrors(filepath.Join(dataDir, "mirrors"))
	if err != nil {
		return res, err
	}
	var mirrors []mirror
	for _, m := range all {
		owner, _, _ := strings.Cut(m.repo, "/")
		if (t.Owner != "" && strings.EqualFold(owner, t.Owner)) ||
			slices.ContainsFunc(t.Repos, func(r string) bool { return strings.EqualFold(r, m.repo) }) {
			mirrors = append(mirrors, m)
		}
	}
	var errs []error
	res.Runs, errs = removeTenantRuns(filepath.Join(dataDir, "runs"), t.RunIDs, mirrors)
	for _, m := range mirrors {
		if lock != nil {
			unlock := lock(m.dir)
			err = os.RemoveAll(m.dir)
			unlock()
		} else {
			err = os.RemoveAll(m.dir)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove mirror of %s: %w", m.repo, err))
			continue
		}
		_ = os.Remove(filepath.Dir(m.dir)) // the owner's directory, when it was the last
		res.Mirrors = append(res.Mirrors, m.repo)
	}
	cacheRoot := filepath.Join(dataDir, "caches")
	for _, c := range t.Caches {
		rel, err := filepath.Rel(cacheRoot, c)
		if err != nil || !filepath.IsLocal(rel) {
			errs = append(errs, fmt.Errorf("caches %s: not under %s", c, cacheRoot))
			continue
		}
		if err := os.RemoveAll(c); err != nil {
			errs = append(errs, fmt.Errorf("remove caches %s: %w", rel, err))
			continue
		}
		res.Caches = append(res.Caches, rel)
	}
	return res, errors.Join(errs...)
}

// removeTenantRuns removes the run directories of ids and those whose
// checkpoint names one of mirrors.
func removeTenantRuns(runsDir string, ids []string, mirrors []mirror) ([]string, []error) {
	entries, err := os.ReadDir(runsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("gc: read %s: %w", runsDir, err)}
	}
	ofTenant := func(dir string) bool {
		repoDir, _ := recorded(dir)
		return repoDir != "" && slices.ContainsFunc(mirrors, func(m mirror) bool { return canonical(repoDir) == canonical(m.dir) })
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(runsDir, e.Name())
		if !e.IsDir() || !isRunID(e.Name()) || !(slices.Contains(ids, e.Name()) || ofTenant(dir)) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove run %s: %w", e.Name(), err))
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errs
}
