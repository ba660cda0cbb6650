// Package checkpoint benchmarks the bot's checkpoint commit against plain
// `git add -A && git commit` (issue 4: within 1.3x, excludes applied).
//
// Both sides start from one generated repository: 20,000 tracked files in a
// realistic tree, a .gitignore that ignores node_modules/, and 100,000
// ignored files under five node_modules directories. The bot works in a
// linked worktree of that repository on its run branch, as a run does; the
// baseline works in a `cp -a` copy of it. Before each round the same 250
// paths change on both sides, untimed: 170 modified, 25 added, 25 deleted
// and 30 written under the default exclude globs (a .cargo-target-bench
// directory and a __pycache__ directory, neither gitignored). The bot
// commits the 220 it should and leaves the 30 out; `git add -A` commits all
// 250, so the baseline does slightly more work: it is the baseline the
// issue names.
//
// Run it with
//
//	go test -run '^$' -bench Checkpoint -benchtime 15x ./bench/checkpoint
package checkpoint
