package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/gc"
)

// dataDirEntries lists runs/* and mirrors/*/* of the data dir.
func (e *serverEnv) dataDirEntries() []string {
	var out []string
	for _, pattern := range []string{"runs/*", "mirrors/*/*"} {
		m, _ := filepath.Glob(filepath.Join(e.dataDir, pattern))
		for _, p := range m {
			rel, _ := filepath.Rel(e.dataDir, p)
			out = append(out, rel)
		}
	}
	return out
}

// TestServerUninstall: installation.deleted cancels the running run of
// the account's repository, waits for it, and leaves nothing of the
// account in the data dir or the queue; installation_repositories.removed
// does the same for one repository; other actions delete nothing.
func TestServerUninstall(t *testing.T) {
	tests := []struct {
		name   string
		action string
		change InstallationChange
		gone   bool
	}{
		{name: "installation deleted", action: "deleted", change: InstallationChange{Account: "Octo"}, gone: true},
		{name: "repository removed", action: "removed", change: InstallationChange{Account: "octo", Removed: []string{"octo/widgets"}}, gone: true},
		{name: "repository added", action: "added", change: InstallationChange{Account: "octo", Added: []string{"octo/widgets"}}},
		{name: "another repository removed", action: "removed", change: InstallationChange{Account: "octo", Removed: []string{"octo/gadgets", "../x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newServerEnv(t)
			e.seed(map[string]string{".kilroy/ci.dot": blockingPipeline})
			e.gh.SetPermission("octo", "widgets", "alice", "write")
			pr := e.openPR(7, "alice", map[string]string{"README.md": "x\n"})
			e.handle(e.prEvent("opened", pr))
			run := e.newRun("ci", 0)
			e.waitNode(run.RunID, "wait")
			if len(e.dataDirEntries()) != 2 {
				t.Fatalf("data dir before: %v, want the run and the mirror", e.dataDirEntries())
			}

			e.handle(Event{Kind: KindInstallation, Action: tt.action, InstallationID: e.gh.InstallationID("octo"), Installation: tt.change})
			runs, err := e.q.RunsOfRepo(context.Background(), "octo/widgets")
			if err != nil {
				t.Fatal(err)
			}
			left := e.dataDirEntries()
			if !tt.gone {
				if len(left) != 2 || len(runs) != 1 || !runs[0].Unfinished() {
					t.Errorf("after %s: data dir %v, runs %+v; want both kept and the run going", tt.action, left, runs)
				}
				e.handle(e.commentEvent(7, "alice", Command{Verb: VerbCancel}))
				e.reps.waitEnd(t, run.RunID)
				return
			}
			if len(left) != 0 || len(runs) != 0 {
				t.Errorf("after %s: data dir %v, queue rows %+v; want nothing of octo", tt.action, left, runs)
			}
			calls := e.reps.calls(run.RunID)
			if last := calls[len(calls)-1]; last != "cancel cancelled by "+uninstallBy {
				t.Errorf("the run's last call = %q, want it cancelled by the uninstall", last)
			}
		})
	}
}

// TestServerSweep: the server's sweep removes a finished run's directory
// and branch once the window passed, keeps the running run's, and a
// mirror used just now.
func TestServerSweep(t *testing.T) {
	e := newServerEnv(t)
	e.seed(map[string]string{".kilroy/ci.dot": blockingPipeline})
	e.gh.SetPermission("octo", "widgets", "alice", "write")
	first := e.openPR(7, "alice", map[string]string{"README.md": "x\n"})
	e.handle(e.prEvent("opened", first))
	done := e.newRun("ci", 0)
	e.waitNode(done.RunID, "wait")
	e.handle(e.commentEvent(7, "alice", Command{Verb: VerbCancel}))
	e.reps.waitEnd(t, done.RunID)
	second := e.openPR(8, "alice", map[string]string{"README.md": "y\n"})
	e.handle(e.prEvent("opened", second))
	running := e.newRun("ci", 1)
	e.waitNode(running.RunID, "wait")

	res, err := e.srv.Sweep(context.Background(), RetentionOptions{
		Retention: gc.Retention{Runs: time.Minute, Branches: time.Minute, Mirrors: 30 * 24 * time.Hour},
		Now:       func() time.Time { return time.Now().Add(time.Hour) }})
	if err != nil || len(res.Failed) > 0 {
		t.Fatalf("Sweep: %v, failed %v", err, res.Failed)
	}
	if len(res.Runs) != 1 || res.Runs[0] != done.RunID || len(res.Mirrors) != 0 {
		t.Errorf("swept %+v; want the finished run %s only", res, done.RunID)
	}
	if _, err := os.Stat(filepath.Join(e.dataDir, "runs", running.RunID)); err != nil {
		t.Errorf("the running run's directory: %v", err)
	}
	e.handle(e.commentEvent(8, "alice", Command{Verb: VerbCancel}))
	e.reps.waitEnd(t, running.RunID)
}
