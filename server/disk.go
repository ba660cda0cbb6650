package server

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// The disk reserve. Every run writes into the data dir (its worktree,
// stage directories, caches), and so does the bot's own git work for
// every tenant: mirrors, fetches, checkouts. A node that fills the
// filesystem (a million files in node_modules/) would make another
// organisation's fetch fail. So while runs go, a guard looks at the data
// dir's filesystem every diskPoll; when its free bytes or inodes fall
// below the server's reserve (sandbox.disk.reserve_bytes,
// reserve_inodes) it stops the run that holds the most of what ran short,
// and removes that run's worktree. The reserve is the margin the bot's
// own git work keeps: fetches and checkouts are never stopped. One run is
// stopped at a time; the next only after that one has ended, if the
// filesystem is still short.

// DiskReserve is what the data dir's filesystem keeps free of runs; zero
// fields are no reserve.
type DiskReserve struct {
	Bytes  int64
	Inodes int64
}

// diskPoll is how often the guard looks at the filesystem while runs go:
// a statfs costs microseconds, and a node writing fast eats into the
// reserve only for this long.
const diskPoll = 50 * time.Millisecond

// DiskReserveError is the cause a run stopped for the reserve is
// cancelled with; its message is what the run's checks say.
type DiskReserveError struct {
	Setting string // sandbox.disk.reserve_bytes or sandbox.disk.reserve_inodes
	Reserve int64
	Free    int64
}

func (e *DiskReserveError) Error() string {
	what := "bytes"
	if e.Setting == settingReserveInodes {
		what = "inodes"
	}
	return fmt.Sprintf("stopped: the server's data dir had %d free %s, below its reserve of %d (server policy %s), "+
		"and this run held the most of them; a run may not fill the disk other repositories' runs share", e.Free, what, e.Reserve, e.Setting)
}

const (
	settingReserveBytes  = "sandbox.disk.reserve_bytes"
	settingReserveInodes = "sandbox.disk.reserve_inodes"
)

// diskGuard watches the filesystem of dir while runs are registered.
type diskGuard struct {
	dir     string
	reserve DiskReserve
	poll    time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	runs    map[string]guardedRun
	stopped string // the run stopped last, until it ends
	looping bool
}

type guardedRun struct {
	dir  string
	stop context.CancelCauseFunc
}

func newDiskGuard(dir string, r DiskReserve, log *slog.Logger) *diskGuard {
	return &diskGuard{dir: dir, reserve: r, poll: diskPoll, log: log, runs: map[string]guardedRun{}}
}

// watch registers run id, whose files are under dir, until the returned
// function is called; stop cancels the run when it is the one to stop.
func (g *diskGuard) watch(id, dir string, stop context.CancelCauseFunc) (done func()) {
	if g == nil || g.reserve == (DiskReserve{}) {
		return func() {}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.runs[id] = guardedRun{dir: dir, stop: stop}
	if !g.looping {
		g.looping = true
		go g.loop()
	}
	return func() { g.unregister(id) }
}

func (g *diskGuard) unregister(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.runs, id)
	if g.stopped == id {
		g.stopped = ""
	}
}

// loop checks the filesystem until no run is registered.
func (g *diskGuard) loop() {
	t := time.NewTicker(g.poll)
	defer t.Stop()
	for range t.C {
		g.mu.Lock()
		if len(g.runs) == 0 {
			g.looping = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		g.check()
	}
}

// check stops the largest run when the filesystem is short.
func (g *diskGuard) check() {
	var st syscall.Statfs_t
	if err := syscall.Statfs(g.dir, &st); err != nil {
		g.log.Warn("disk guard: statfs of the data dir", "err", err)
		return
	}
	short := &DiskReserveError{}
	switch free, inodes := int64(st.Bavail)*int64(st.Bsize), int64(st.Ffree); {
	case g.reserve.Inodes > 0 && inodes < g.reserve.Inodes:
		short = &DiskReserveError{Setting: settingReserveInodes, Reserve: g.reserve.Inodes, Free: inodes}
	case g.reserve.Bytes > 0 && free < g.reserve.Bytes:
		short = &DiskReserveError{Setting: settingReserveBytes, Reserve: g.reserve.Bytes, Free: free}
	default:
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped != "" {
		return // the run stopped last has not ended yet
	}
	id, most := "", int64(-1)
	for rid, r := range g.runs {
		if n := usage(r.dir, short.Setting == settingReserveInodes); n > most {
			id, most = rid, n
		}
	}
	if id == "" {
		return
	}
	g.log.Warn("disk guard: data dir below its reserve; stopping the run that holds the most",
		"run", id, "setting", short.Setting, "free", short.Free, "reserve", short.Reserve, "held", most)
	g.stopped = id
	g.runs[id].stop(short)
}

// usage counts the inodes (or bytes) under dir, without following links.
func usage(dir string, inodes bool) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished or unreadable: count what can be seen
		}
		if inodes {
			n++
		} else if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}
