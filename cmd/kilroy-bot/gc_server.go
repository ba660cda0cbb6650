package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/queue"
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
}

// runServerGC sweeps a server's data dir as serve does, by the retention
// of the server policy file (or the defaults; --older-than sets the runs'
// and branches' windows), asking the server's queue which runs are
// active. It holds no lock of a running serve, so mirrors are collected
// keeping an hour of unreachable objects, and run branches on GitHub are
// left to serve (gc has no App credentials).
func runServerGC(ctx context.Context, o serverGC, stdout, stderr io.Writer) int {
	ret := gc.DefaultRetention()
	if o.configFile != "" {
		data, err := os.ReadFile(o.configFile)
		var p serverPolicy
		if err == nil {
			err = decodePolicy(o.configFile, data, &p)
		}
		if err == nil {
			ret, _, err = p.Retention.options(nil)
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
	res, err := gc.Sweep(ctx, gc.SweepOptions{DataDir: o.dataDir, Retention: ret, Queue: q, Git: o.git})
	for _, id := range res.Runs {
		fmt.Fprintf(stdout, "removed run directory %s\n", id)
	}
	for _, what := range [][]string{res.Branches, res.Mirrors, res.Collected} {
		for _, s := range what {
			fmt.Fprintf(stdout, "removed %s\n", s)
		}
	}
	for _, f := range res.Failed {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "gc: removed %d run directories, %d run branches, %d mirrors (%s)\n",
		len(res.Runs), len(res.Branches), len(res.Mirrors), o.dataDir)
	if len(res.Failed) > 0 {
		return 1
	}
	return 0
}
