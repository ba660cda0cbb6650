// Package gitops is the one way kilroy-bot talks to git. Every invocation of
// the product goes through a *Git, which starts the git CLI through
// runner/sandbox with a complete, hardened environment: no system or global
// config, a HOME the bot owns, no prompts or askpass helpers, hooks and
// fsmonitor disabled, no background maintenance, and a fixed bot identity
// that is passed through the environment so no config file is ever written.
//
// The model:
//
//   - A repository is either the user's own repository (local runs) or a
//     per-repository bare mirror in the data dir (GitHub runs). The mirror
//     fetches with a token passed only through git's environment config, so
//     runs of one repository share one object store.
//   - Each run works in a linked worktree of that repository, on its own run
//     branch (kilroy/run/<pipeline>/<run-id>). The branch ref lives in the
//     repository, not in the worktree, so whatever a node does to the
//     worktree, the checkpoints already committed survive. The user's own
//     working tree, index and HEAD are never touched.
//   - After every node the runner commits a checkpoint: the changed paths
//     from `git status`, minus the paths the artifact policy excludes
//     (doublestar globs), staged one by one by exact path (never
//     `git add -A`) and committed with the node's run, id and status as
//     trailers. Tracked files, .gitignore included, are never edited.
//   - ChangedSince lists what a run changed for the verify.artifacts
//     handler; MergeBranches joins parallel branches; Push publishes a run
//     branch, retrying once against the remote's current tip.
//   - ParkWorktree and ReuseWorktree let a pull request run's worktree
//     serve the next run of the repository (runner/wtpool): moved by
//     rename, its registration rewritten, its index checked, cleaned and
//     reset so it equals a fresh checkout, writing only changed files.
//   - Since nothing collects garbage on its own, MaintainMirror runs
//     `git gc` on a mirror past git's auto-gc limits, and
//     DeleteUnusedRunBranch undoes the branch of a run that failed before
//     its first checkpoint.
//
// Read-only queries against the user's repository run with
// GIT_OPTIONAL_LOCKS=0 so they never rewrite its index while the user
// works; commands in a run worktree stop repository discovery at the
// worktree, so a node that deletes .git cannot redirect a commit into an
// enclosing repository.
package gitops
