// Package server is the GitHub App's side of kilroy-bot: it decides what
// an accepted GitHub event asks for and runs the pull request jobs that
// follow, each through package runner like a local run.
//
// A Server works the queue's two job kinds. An event job (Server.Accept
// enqueues one per accepted delivery) is decided by HandleEvent: the trust
// rule of policy.Decide, the configuration and pipelines read from the pull
// request's head or, for untrusted or comment-approved runs, its base
// branch in a per-repository bare mirror
// (<data-dir>/mirrors/<owner>/<name>.git), then runs enqueued with their
// checks created queued, or a gated summary check, a reply, or a failed
// kilroy/config check. A run job (HandleRun) fetches with a fresh token,
// makes the worktree from the mirror in <data-dir>/runs/<run-id>/, executes
// the same runner.Prepared path as a local run with a Reporter listening,
// pushes the run branch after each checkpoint and at the end, completes
// every check and revokes its tokens. A run's wait.human node asks on the
// pull request and polls the queue for the answer a writer's
// `/kilroy answer` records (human.go, event_answer.go).
//
// The webhook decodes deliveries into this package's Event, Repo and
// PullRequest; the queue stores them as event jobs. server reaches GitHub
// only through functions and interfaces handed to it (GitHub, Reporter,
// TokenSource); it imports no webhook or go-github types.
package server
