package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// isServerDataDir reports whether dir is a data dir of `kilroy-bot serve`:
// it has mirrors or the SQLite queue, or a database URL names its queue.
func isServerDataDir(dir, databaseURL string) bool {
	for _, p := range []string{filepath.Join(dir, "mirrors"), filepath.Join(dir, "kilroy.db")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return databaseURL != ""
}

// serverGC is what `kilroy-bot gc` needs to sweep a server's data dir.
type serverGC struct {
	dataDir, databaseURL, configFile string
	olderThan                        time.Duration // 0: the policy's windows
	git                              *gitops.Git
	dryRun                           bool // print what would be removed, remove nothing
}

// runServerGC sweeps a server's data dir as serve does, by the retention
// of the server policy file (or the defaults; --older-than sets the runs'
// and branches' windows), asking the server's queue which runs are
// active. It holds no mirror lock of a running serve, so mirrors are
// collected keeping an hour of unreachable objects, and run branches on
// GitHub are left to serve (gc has no App credentials). It takes the
// queue's sweep lock as serve does; a dry run prints what would go and
// removes nothing.
func runServerGC(ctx context.Context, o serverGC, stdout, stderr io.Writer) int {
	ret := gc.DefaultRetention()
	ret.CacheBytes = defaultCacheMaxBytes
	if o.configFile != "" {
		data, err := os.ReadFile(o.configFile)
		var p serverPolicy
		if err == nil {
			err = decodePolicy(o.configFile, data, &p)
		}
		if err == nil {
			ret, _, err = p.retention()
		}
		if err != nil {
			fmt.Fprintf(stderr, "kilroy-bot gc: --config: %v\n", err)
			return 2
		}
	}
	if o.olderThan > 0 {
		ret.Runs, ret.Branches = o.olderThan, o.olderThan
	}
	q, err := queue.Open(ctx, queue.Options{DataDir: o.dataDir, DatabaseURL: o.databaseURL})
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", err)
		return 1
	}
	defer q.Close()
	res, err := gc.Sweep(ctx, gc.SweepOptions{DataDir: o.dataDir, Retention: ret, Queue: q, Git: o.git, DryRun: o.dryRun})
	verb := "removed"
	if o.dryRun {
		verb = "would remove"
	}
	for _, id := range res.Runs {
		fmt.Fprintf(stdout, "%s run directory %s\n", verb, id)
	}
	for _, b := range res.Branches {
		fmt.Fprintf(stdout, "%s run branch %s\n", verb, b)
	}
	for _, m := range res.Mirrors {
		fmt.Fprintf(stdout, "%s mirror %s\n", verb, m)
	}
	for _, m := range res.Collected {
		fmt.Fprintf(stdout, "collected mirror %s\n", m)
	}
	for _, c := range res.Caches {
		fmt.Fprintf(stdout, "%s caches %s\n", verb, c)
	}
	for _, f := range res.Failed {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", err)
		return 1
	}
	if res.Skipped {
		fmt.Fprintf(stderr, "kilroy-bot gc: a server replica is sweeping %s's queue; nothing removed, try again later\n", o.dataDir)
		return 1
	}
	fmt.Fprintf(stdout, "gc: %s %d run directories, %d run branches, %d mirrors (%s)\n",
		verb, len(res.Runs), len(res.Branches), len(res.Mirrors), o.dataDir)
	if len(res.Failed) > 0 {
		return 1
	}
	return 0
}
