// Package runner runs one pipeline end to end on behalf of a host: it
// makes a worktree of the commit to test, resolves the artifact policy
// once, executes the engine with a Host that starts every process through
// runner/sandbox and commits a checkpoint through runner/gitops after every
// node, and keeps the run directory (checkpoint.json, checkpoints.ndjson, progress.ndjson, the
// stage directories) that resume and the reports read.
//
// The run directory lives outside the worktree on the same filesystem:
//
//	<run-dir>/
//	  worktree/               the git worktree nodes run in
//	  checkpoint.json         the run's state in the Attractor spec's shape and what
//	                          the run runs (policy snapshot, branch), rewritten after
//	                          every checkpoint (checkpoint_file.go)
//	  checkpoints.ndjson      one state delta per checkpoint, appended (journal.go)
//	  graph.dot               the pipeline source the run executed
//	  progress.ndjson         one JSON event per line
//	  report.md               the markdown the summary check shows
//	  nodes/<node-id>/        stage directories (status.json, logs, invocation.json)
//	  policy-managed-roots/   build caches the artifact policy points tools at
//	  home/                   the HOME git runs with
//
// The GitHub App's pull request runs (package server) go through the same
// entry points as local ones: SelectPipeline and Assemble, or
// PrepareResume, then Prepared.Execute.
//
// runner knows nothing of GitHub: it imports no server, webhook or
// go-github types.
package runner
