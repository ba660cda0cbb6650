package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

const gcUsage = `usage: kilroy-bot gc [--data-dir DIR] [--older-than 14d] [--repo DIR] [--dry-run]
       kilroy-bot gc --data-dir SERVER_DATA_DIR [--config FILE] [--database-url URL] [--older-than 14d] [--dry-run]

Removes local runs that nothing changed for longer than the window: each
run's directory (DATA_DIR/runs/RUN_ID), its worktree and its run branch
kilroy/run/PIPELINE/RUN_ID in the repository it ran in. A running run, and
an interrupted one you could still resume, changed within the window and
are kept; so are directories that are not run directories.

On the data dir of kilroy-bot serve (it has mirrors/ or the SQLite queue,
or --database-url names the queue) gc sweeps as serve does: by the
retention of the server policy file (--config, else the defaults), asking
the queue which runs are active. --older-than then sets the windows of run
directories and run branches; --dry-run prints what would be removed;
--repo is not supported there. With a Postgres queue one process sweeps at
a time: while a server replica sweeps, gc removes nothing and exits 1.

  --data-dir DIR       the data dir whose runs/ to clean (default
                       $KILROY_DATA_DIR, else kilroy-bot in the user cache
                       directory)
  --older-than AGE     the window: 14d (the default), 36h, 1d12h, ...
  --repo DIR           only the runs of this repository (any directory inside it)
  --dry-run            print what would be removed, remove nothing
  --git PATH           the git binary (default git)
  --config FILE        server policy file whose retention applies (default
                       $KILROY_CONFIG)
  --database-url URL   the server's Postgres queue (default
                       $KILROY_DATABASE_URL; none: SQLite in the data dir)

Exit status: 0 done, 1 a run could not be removed, 2 usage error.
`

// runGC implements `kilroy-bot gc`.
func runGC(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	dataDir := fs.String("data-dir", defaultDataDir(), "")
	olderThan := fs.String("older-than", "14d", "")
	repo := fs.String("repo", "", "")
	dryRun := fs.Bool("dry-run", false, "")
	gitPath := fs.String("git", "git", "")
	configFile := fs.String("config", "", "")
	databaseURL := fs.String("database-url", "", "")
	if code, ok := parseFlags(fs, args, "gc", gcUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kilroy-bot gc: unexpected argument %q\n\n%s", fs.Arg(0), gcUsage)
		return 2
	}
	window, err := attractor.ParseDuration(*olderThan)
	if err != nil || window <= 0 {
		fmt.Fprintf(stderr, "kilroy-bot gc: --older-than %q: want a positive age such as 14d, 36h or 1d12h\n", *olderThan)
		return 2
	}
	host := sandbox.HostEnv()
	if v := host["KILROY_DATA_DIR"]; v != "" && *dataDir == defaultDataDir() {
		*dataDir = v
	}
	home, err := os.MkdirTemp("", "kilroy-gc-")
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", err)
		return 1
	}
	defer os.RemoveAll(home)
	g, err := gitops.New(gitops.Options{GitPath: *gitPath, PATH: host["PATH"], HomeDir: home})
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", err)
		return 2
	}
	if *configFile == "" {
		*configFile = host["KILROY_CONFIG"]
	}
	if *databaseURL == "" {
		*databaseURL = host["KILROY_DATABASE_URL"]
	}
	if isServerDataDir(*dataDir, *databaseURL) {
		if *repo != "" {
			fmt.Fprintf(stderr, "kilroy-bot gc: %s is a server's data dir: --repo is for local runs\n", *dataDir)
			return 2
		}
		o := serverGC{dataDir: *dataDir, databaseURL: *databaseURL, configFile: *configFile, git: g, dryRun: *dryRun}
		if olderThanGiven(fs) {
			o.olderThan = window
		}
		return runServerGC(ctx, o, stdout, stderr)
	}
	opts := gc.Options{RunsDir: filepath.Join(*dataDir, "runs"), OlderThan: window, DryRun: *dryRun, Git: g}
	if *repo != "" {
		if opts.Repo, err = g.RepoRoot(ctx, *repo); err != nil {
			fmt.Fprintf(stderr, "kilroy-bot gc: --repo: %v\n", err)
			return 2
		}
	}
	res, err := gc.Collect(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot gc: %v\n", err)
		return 1
	}
	return reportGC(stdout, stderr, res, opts)
}

// olderThanGiven reports whether --older-than was on the command line.
func olderThanGiven(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "older-than" })
	return given
}

// reportGC prints a line per run removed or not, then the totals.
func reportGC(stdout, stderr io.Writer, res gc.Result, opts gc.Options) int {
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	for _, r := range res.Removed {
		what := "run directory " + r.Dir
		if r.BranchDeleted {
			what += ", branch " + r.Branch + " in " + r.RepoDir
		}
		fmt.Fprintf(stdout, "%s %s (unchanged for %s): %s\n", verb, r.ID, days(r.Age), what)
	}
	for _, r := range res.Failed {
		fmt.Fprintf(stderr, "kilroy-bot gc: run %s (%s): %v\n", r.ID, r.Dir, r.Err)
	}
	fmt.Fprintf(stdout, "gc: %s %d runs, kept %d changed within %s", verb, len(res.Removed), res.Kept, days(opts.OlderThan))
	if opts.Repo != "" {
		fmt.Fprintf(stdout, " or of other repositories")
	}
	fmt.Fprintf(stdout, " (%s)\n", opts.RunsDir)
	if len(res.Failed) > 0 {
		return 1
	}
	return 0
}

// days renders an age for people: whole days, else hours.
func days(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}
