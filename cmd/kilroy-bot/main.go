// Command kilroy-bot runs Attractor pipelines: locally with `run`, as a
// linter with `validate`, and as a GitHub App with `serve`.
//
// This file is the composition root: flags and environment are read here
// and nowhere else, and every subcommand wires its packages together from
// them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: kilroy-bot <command> [arguments]

commands:
  init [--template NAME] [--repo DIR] [--force]
                                  write a starter pipeline into .kilroy/ (init -h lists the templates)
  validate [--json] [--repo DIR] [--agents FILE] [FILE...]
                                  check pipelines and config.yml (default: the repository's .kilroy/);
                                  exit 0 clean or warnings, 1 errors, 2 usage
  run [--repo DIR] [--graph NAME|PATH] [--run-dir DIR] [--answer NODE=LABEL] [--yes]
                                  run a pipeline on the repository's HEAD in a fresh worktree;
                                  exit 0 success, 1 pipeline failed, 2 usage or config error
  resume RUN_DIR                  continue an interrupted run from its last checkpoint
  gc [--older-than 14d] [--repo DIR] [--dry-run]
                                  remove local runs (run directories, run branches, worktrees)
                                  unchanged for longer than the window
  serve [flags]                   run the GitHub App server (serve -h lists the settings);
                                  exit 0 after a graceful shutdown, 1 on failure, 2 bad settings
  setup --public-url URL [--org ORG]
                                  register the GitHub App from a manifest and store its
                                  credentials in the data dir (setup -h tells more)
  healthcheck [--url URL]         exit 0 when serve answers GET /healthz (the image's HEALTHCHECK)
  version                         print the version and the commit it was built from (also --version)
  help                            show this text
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "init":
		return runInit(args[1:], stdout, stderr)
	case "validate":
		return runValidate(ctx, args[1:], stdout, stderr)
	case "run":
		return runLocal(ctx, args[1:], stdout, stderr)
	case "resume":
		return resumeLocal(ctx, args[1:], stdout, stderr)
	case "gc":
		return runGC(ctx, args[1:], stdout, stderr)
	case "serve":
		return runServe(ctx, args[1:], os.Getenv, stdout, stderr)
	case "setup":
		return runSetup(ctx, args[1:], os.Getenv, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args[1:], os.Getenv, stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "kilroy-bot: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// parseFlags parses a subcommand's flags, all of them described in usage
// (not in Go's flag dump): -h and --help print usage on stdout (exit 0); a
// bad flag prints the error and usage on stderr (exit 2). ok says whether
// to go on; arguments left over are the caller's to check.
func parseFlags(fs *flag.FlagSet, args []string, cmd, usage string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0, false
	case err != nil:
		fmt.Fprintf(stderr, "kilroy-bot %s: %v\n\n%s", cmd, err, usage)
		return 2, false
	}
	return 0, true
}
