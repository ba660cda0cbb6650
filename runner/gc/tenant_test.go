package gc_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner/gc"
)

// TestRemoveTenant: an uninstalled account loses every mirror under its
// name (whatever the case), the runs the queue named and those whose
// checkpoint names one of its mirrors; a repository removed from an
// installation loses its own; another account keeps everything.
func TestRemoveTenant(t *testing.T) {
	tests := []struct {
		name        string
		tenant      func(queued string) gc.Tenant
		wantMirrors []string
		wantRuns    int // of the three runs of octo's
	}{
		{name: "installation deleted", tenant: func(q string) gc.Tenant { return gc.Tenant{Owner: "OCTO", RunIDs: []string{q}} },
			wantMirrors: []string{"octo/old", "octo/widgets"}, wantRuns: 3},
		{name: "repository removed", tenant: func(q string) gc.Tenant { return gc.Tenant{Repos: []string{"octo/Widgets"}, RunIDs: []string{q}} },
			wantMirrors: []string{"octo/widgets"}, wantRuns: 3},
		{name: "another account", tenant: func(string) gc.Tenant { return gc.Tenant{Owner: "octo-other", Repos: []string{"octo/nothing"}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newServerData(t)
			other := d.mirror("someone/else", d.remote, time.Now())
			now := time.Now()
			ids := []string{runIDAt(now), runIDAt(now.Add(time.Second))}
			for _, id := range ids {
				d.run(id, now, 64)
			}
			// A run the queue knows of that stopped before its checkpoint.
			queued := runIDAt(now.Add(2 * time.Second))
			if err := os.MkdirAll(filepath.Join(d.dir, "runs", queued, "nodes"), 0o755); err != nil {
				t.Fatal(err)
			}
			locked := map[string]bool{}
			res, err := gc.RemoveTenant(d.dir, tt.tenant(queued), func(dir string) func() {
				locked[filepath.Base(dir)] = true
				return func() {}
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(res.Mirrors)
			if diff := cmp.Diff(res.Mirrors, tt.wantMirrors); diff != "" {
				t.Errorf("mirrors removed (-got +want):\n%s", diff)
			}
			if len(res.Runs) != tt.wantRuns || len(locked) != len(tt.wantMirrors) {
				t.Errorf("removed runs %v (want %d), locked mirrors %v", res.Runs, tt.wantRuns, locked)
			}
			for _, m := range tt.wantMirrors {
				if isDir(filepath.Join(d.dir, "mirrors", m+".git")) {
					t.Errorf("mirror %s is still there", m)
				}
			}
			if !isDir(other) {
				t.Errorf("another account's mirror went")
			}
		})
	}
}

// An uninstall deletes the caches the server names for the tenant, and
// nothing outside the data dir's caches/ whatever it is handed.
func TestRemoveTenantCaches(t *testing.T) {
	data := t.TempDir()
	now := time.Now()
	gone := cacheAt(t, data, 1, "octo/widgets", now, 1)
	kept := cacheAt(t, data, 2, "acme/gadgets", now, 1)
	outside := t.TempDir()
	res, err := gc.RemoveTenant(data, gc.Tenant{Caches: []string{filepath.Join(data, "caches", "1"), outside,
		filepath.Join(data, "caches", "..", "runs")}}, nil)
	if err == nil {
		t.Errorf("RemoveTenant took caches outside caches/ without an error")
	}
	if !slices.Equal(res.Caches, []string{"1"}) || isDir(gone) || !isDir(kept) || !isDir(outside) {
		t.Errorf("removed %v; widgets' caches there %v, gadgets' %v, the outside directory %v; want [1], false, true, true",
			res.Caches, isDir(gone), isDir(kept), isDir(outside))
	}
}
