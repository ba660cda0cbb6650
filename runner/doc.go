// Package runner runs one pipeline end to end on behalf of a host: it
// makes a worktree of the commit to test, resolves the artifact policy
// once, executes the engine with a Host that starts every process through
// runner/sandbox and commits a checkpoint through runner/gitops after every
// node, and keeps the run directory (checkpoint.json, progress.ndjson, the
// stage directories) that resume and the reports read.
//
// The run directory lives outside the worktree on the same filesystem:
//
//	<run-dir>/
//	  worktree/               the git worktree nodes run in
//	  checkpoint.json         state after the last checkpoint, written atomically
//	  graph.dot               the pipeline source the run executed
//	  progress.ndjson         one JSON event per line
//	  report.md               the markdown the summary check shows
//	  nodes/<node-id>/        stage directories (status.json, logs, invocation.json)
//	  policy-managed-roots/   build caches the artifact policy points tools at
//	  home/                   the HOME git runs with
//
// For the GitHub App, a Server works the queue's two job kinds. An event job
// (Server.Accept enqueues one per accepted delivery) is decided by
// HandleEvent: the trust rule of policy.Decide, the configuration and
// pipelines read from the pull request's head or, for untrusted or
// comment-approved runs, its base branch in a per-repository bare mirror
// (<data-dir>/mirrors/<owner>/<name>.git), then runs enqueued with their
// checks created queued, or a gated summary check, a reply, or a failed
// kilroy/config check. A run job (HandleRun) fetches with a fresh token,
// makes the worktree from the mirror in <data-dir>/runs/<run-id>/, executes
// the same Prepared path as a local run with a Reporter listening, pushes
// the run branch after each checkpoint and at the end, completes every
// check and revokes its tokens. A run's wait.human node asks on the pull
// request and polls the queue for the answer a writer's
// `/kilroy answer` records (human.go, event_answer.go).
//
// runner reaches GitHub only through functions and interfaces handed to it
// (GitHub, Reporter, TokenSource); it imports no webhook or go-github types.
package runner
