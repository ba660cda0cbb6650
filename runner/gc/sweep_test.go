package gc_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// fakeQueue answers Active from a set; err fails every call. Its sweep
// lock is free unless held is set (another process is sweeping).
type fakeQueue struct {
	active map[string]bool
	err    error
	held   bool
}

func (q fakeQueue) TrySweepLock(context.Context) (func(), bool, error) {
	if q.held {
		return nil, false, nil
	}
	return func() {}, true, nil
}

func (q fakeQueue) Active(_ context.Context, ids []string) (map[string]bool, error) {
	if q.err != nil {
		return nil, q.err
	}
	out := map[string]bool{}
	for _, id := range ids {
		if q.active[id] {
			out[id] = true
		}
	}
	return out, nil
}

// sweepNow is the sweep's clock: 20 days after the fixture was made, so
// anything last used when the test started is past a 14-day window.
var sweepNow = time.Now().Add(20 * 24 * time.Hour)

// runIDAt is a run id created at t.
func runIDAt(t time.Time) string {
	return ulid.MustNew(ulid.Timestamp(t), rand.Reader).String()
}

// serverData is a server's data dir: mirrors of two repositories, runs.
type serverData struct {
	t       *testing.T
	g       *gitops.Git
	dir     string
	src     string // the repository both mirrors were fetched from
	remote  string // widgets' remote (a bare repository)
	widgets string // mirrors/octo/widgets.git
	old     string // mirrors/octo/old.git, unused for 40 days
	base    string // the commit runs start from
}

func newServerData(t *testing.T) *serverData {
	g, err := gitops.New(gitops.Options{PATH: os.Getenv("PATH"), HomeDir: t.TempDir(), AllowFileProtocol: true})
	if err != nil {
		t.Fatal(err)
	}
	d := &serverData{t: t, g: g, dir: t.TempDir(), src: newRepo(t)}
	d.remote = filepath.Join(t.TempDir(), "remote.git")
	git(t, filepath.Dir(d.remote), "init", "-q", "--bare", d.remote)
	git(t, d.src, "push", "-q", d.remote, "main")
	d.base = git(t, d.src, "rev-parse", "HEAD")
	d.widgets = d.mirror("octo/widgets", d.remote, sweepNow.Add(-24*time.Hour))
	oldRemote := filepath.Join(t.TempDir(), "old.git")
	git(t, filepath.Dir(oldRemote), "init", "-q", "--bare", oldRemote)
	d.old = d.mirror("octo/old", oldRemote, sweepNow.Add(-40*24*time.Hour))
	return d
}

// mirror makes mirrors/<repo>.git from src, whose remote is remote, last
// used at used.
func (d *serverData) mirror(repo, remote string, used time.Time) string {
	ctx := context.Background()
	dir := filepath.Join(d.dir, "mirrors", repo+".git")
	if err := d.g.EnsureMirror(ctx, dir, "file://"+d.src); err != nil {
		d.t.Fatal(err)
	}
	if err := d.g.Fetch(ctx, dir, "file://"+d.src); err != nil {
		d.t.Fatal(err)
	}
	if err := gc.MarkMirror(dir, gc.MirrorInfo{Repo: repo, CloneURL: "file://" + remote}); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "kilroy-mirror.json"), used, used); err != nil {
		d.t.Fatal(err)
	}
	return dir
}

// run makes a finished run of widgets: its directory (last changed at
// changed), its branch with a checkpoint holding size random bytes,
// pushed to the remote.
func (d *serverData) run(id string, changed time.Time, size int) {
	t, ctx := d.t, context.Background()
	dir := filepath.Join(d.dir, "runs", id)
	branch := gitops.RunBranch("ci", id)
	wt := filepath.Join(dir, "worktree")
	if err := d.g.AddWorktree(ctx, d.widgets, wt, branch, d.base); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, size)
	_, _ = rand.Read(blob)
	if err := os.WriteFile(filepath.Join(wt, "artifact.bin"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, wt, "add", "artifact.bin")
	git(t, wt, "commit", "-q", "-m", "checkpoint")
	git(t, d.widgets, "push", "-q", d.remote, "refs/heads/"+branch)
	if err := d.g.RemoveWorktree(ctx, d.widgets, wt); err != nil { // as a finished run's
		t.Fatal(err)
	}
	for name, content := range map[string]string{"checkpoint.json": `{"repo_dir":"` + d.widgets + `","branch":"` + branch + `"}`,
		"nodes/build/stdout.log": "ok\n", "report.md": "# report\n"} {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error { return os.Chtimes(p, changed, changed) })
}

// state lists what is left: run dirs, branches of widgets and of its
// remote, mirrors.
func (d *serverData) state() []string {
	var out []string
	entries, _ := os.ReadDir(filepath.Join(d.dir, "runs"))
	for _, e := range entries {
		out = append(out, "run "+e.Name())
	}
	for where, repo := range map[string]string{"branch ": d.widgets, "remote ": d.remote} {
		if !isDir(repo) {
			continue
		}
		for _, b := range strings.Fields(git(d.t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/")) {
			out = append(out, where+b)
		}
	}
	for _, m := range []string{d.widgets, d.old} {
		if isDir(m) {
			out = append(out, "mirror "+filepath.Base(m))
		}
	}
	slices.Sort(out)
	return out
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func dirBytes(t *testing.T, dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// TestSweep: with the default windows and remote deletion opted in, the
// sweep removes the finished runs' directories and branches (local and
// remote) older than the window, keeps an active run's however old, a
// recent run's, and branches outside the bot's run namespace; deletes the
// mirror nobody used for 40 days; and collects the other, so a deleted
// 16 MiB artifact's objects leave the disk.
func TestSweep(t *testing.T) {
	d := newServerData(t)
	start := time.Now()
	oldRun, activeRun := runIDAt(start), runIDAt(start.Add(time.Second))
	recentRun := runIDAt(sweepNow.Add(-time.Hour)) // a run id of the sweep's yesterday
	d.run(oldRun, start, 16<<20)
	d.run(activeRun, start, 1024)
	d.run(recentRun, sweepNow.Add(-time.Hour), 1024)
	git(t, d.widgets, "branch", "kilroy/other", d.base)
	git(t, d.widgets, "branch", "kilroy/run/ci/not-a-run-id", d.base)
	git(t, d.remote, "branch", "kilroy/run/ci/not-a-run-id", d.base)
	if err := os.MkdirAll(filepath.Join(d.dir, "runs", "not-a-run"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := dirBytes(t, d.widgets)

	var remotes []string
	res, err := gc.Sweep(context.Background(), gc.SweepOptions{
		DataDir: d.dir, Queue: fakeQueue{active: map[string]bool{activeRun: true}}, Git: d.g,
		Retention: gc.Retention{Runs: gc.DefaultRuns, Branches: gc.DefaultBranches, Mirrors: gc.DefaultMirrors, RemoteBranches: 14 * 24 * time.Hour},
		Remote: func(_ context.Context, info gc.MirrorInfo) (*gitops.Git, func(), error) {
			remotes = append(remotes, info.Repo)
			return d.g, func() {}, nil
		},
		LockMirror: func(string) func() { return func() {} },
		Now:        func() time.Time { return sweepNow },
	})
	if err != nil || len(res.Failed) > 0 {
		t.Fatalf("Sweep: %v, failed %v", err, res.Failed)
	}
	oldBranch := "kilroy/run/ci/" + oldRun
	want := gc.Swept{Runs: []string{oldRun}, Branches: []string{"octo/widgets " + oldBranch},
		RemoteBranches: []string{"octo/widgets " + oldBranch}, Mirrors: []string{"octo/old"}, Collected: []string{"octo/widgets"}}
	if diff := cmp.Diff(res, want); diff != "" {
		t.Errorf("Sweep (-got +want):\n%s", diff)
	}
	left := []string{"run " + activeRun, "run " + recentRun, "run not-a-run", "mirror widgets.git",
		"branch kilroy/other", "branch kilroy/run/ci/not-a-run-id", "branch kilroy/run/ci/" + activeRun, "branch kilroy/run/ci/" + recentRun,
		"remote main", "remote kilroy/run/ci/not-a-run-id", "remote kilroy/run/ci/" + activeRun, "remote kilroy/run/ci/" + recentRun}
	slices.Sort(left)
	if diff := cmp.Diff(d.state(), left); diff != "" {
		t.Errorf("left (-got +want):\n%s", diff)
	}
	after := dirBytes(t, d.widgets)
	t.Logf("widgets mirror: %d bytes before the sweep, %d after", before, after)
	if before-after < 16<<20 {
		t.Errorf("the mirror went from %d to %d bytes: the deleted branch's 16 MiB artifact is still there", before, after)
	}
	if diff := cmp.Diff(remotes, []string{"octo/old", "octo/widgets"}); diff != "" {
		t.Errorf("remote gits asked for (-got +want):\n%s", diff)
	}

	// A second sweep finds nothing more to do.
	again, err := gc.Sweep(context.Background(), gc.SweepOptions{DataDir: d.dir, Queue: fakeQueue{active: map[string]bool{activeRun: true}},
		Git: d.g, Retention: gc.DefaultRetention(), Now: func() time.Time { return sweepNow }})
	if err != nil || !cmp.Equal(again, gc.Swept{}) {
		t.Errorf("second Sweep = %+v, %v; want nothing done", again, err)
	}
}

// TestSweepWithoutQueueDeletesNothing: when the queue cannot say which
// runs are active, nothing goes.
func TestSweepWithoutQueueDeletesNothing(t *testing.T) {
	d := newServerData(t)
	d.run(runIDAt(time.Now()), time.Now(), 1024)
	before := d.state()
	res, err := gc.Sweep(context.Background(), gc.SweepOptions{DataDir: d.dir, Queue: fakeQueue{err: errors.New("database down")},
		Git: d.g, Retention: gc.DefaultRetention(), Now: func() time.Time { return sweepNow }})
	if err == nil || !strings.Contains(err.Error(), "database down") {
		t.Errorf("Sweep error = %v, want the queue's", err)
	}
	if diff := cmp.Diff(d.state(), before); diff != "" || len(res.Runs)+len(res.Branches)+len(res.Mirrors) > 0 {
		t.Errorf("the sweep deleted %+v without the queue (-got +want):\n%s", res, diff)
	}
}

// TestSweepSkipsWhileAnotherSweeps: while another process sharing the
// queue holds the sweep lock, a sweep deletes nothing and says it skipped.
func TestSweepSkipsWhileAnotherSweeps(t *testing.T) {
	d := newServerData(t)
	d.run(runIDAt(time.Now()), time.Now(), 1024)
	before := d.state()
	res, err := gc.Sweep(context.Background(), gc.SweepOptions{DataDir: d.dir, Queue: fakeQueue{held: true},
		Git: d.g, Retention: gc.DefaultRetention(), Now: func() time.Time { return sweepNow }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, gc.Swept{Skipped: true}); diff != "" {
		t.Errorf("Sweep (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(d.state(), before); diff != "" {
		t.Errorf("the sweep deleted while another held the lock (-got +want):\n%s", diff)
	}
}

// TestSweepDryRun: a dry run lists what the sweep deletes, locally and on
// the remote, and deletes, collects and locks nothing; the sweep after it
// deletes what it listed.
func TestSweepDryRun(t *testing.T) {
	d := newServerData(t)
	oldRun, keptRun := runIDAt(time.Now()), runIDAt(sweepNow.Add(-time.Hour))
	d.run(oldRun, time.Now(), 1024)
	d.run(keptRun, sweepNow.Add(-time.Hour), 1024)
	before := d.state()
	opts := gc.SweepOptions{DataDir: d.dir, Git: d.g, DryRun: true,
		Queue:     fakeQueue{held: true}, // another sweeps: a dry run does not need the lock
		Retention: gc.Retention{Runs: gc.DefaultRuns, Branches: gc.DefaultBranches, Mirrors: gc.DefaultMirrors, RemoteBranches: gc.DefaultRuns},
		Remote: func(context.Context, gc.MirrorInfo) (*gitops.Git, func(), error) {
			return d.g, func() {}, nil
		},
		Now: func() time.Time { return sweepNow },
	}
	dry, err := gc.Sweep(context.Background(), opts)
	if err != nil || len(dry.Failed) > 0 {
		t.Fatalf("dry Sweep: %v, failed %v", err, dry.Failed)
	}
	oldBranch := "octo/widgets kilroy/run/ci/" + oldRun
	want := gc.Swept{Runs: []string{oldRun}, Branches: []string{oldBranch}, RemoteBranches: []string{oldBranch},
		Mirrors: []string{"octo/old"}}
	if diff := cmp.Diff(dry, want); diff != "" {
		t.Errorf("dry Sweep (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(d.state(), before); diff != "" {
		t.Errorf("the dry run deleted (-got +want):\n%s", diff)
	}

	opts.DryRun, opts.Queue = false, fakeQueue{}
	real, err := gc.Sweep(context.Background(), opts)
	if err != nil || len(real.Failed) > 0 {
		t.Fatalf("Sweep: %v, failed %v", err, real.Failed)
	}
	real.Collected = nil // collecting is not deleting: the dry run does not list it
	if diff := cmp.Diff(real, dry); diff != "" {
		t.Errorf("the sweep did other than its dry run listed (-got +want):\n%s", diff)
	}
}
