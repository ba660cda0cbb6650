// Package worktree benchmarks the time from "a run starts" to "its
// worktree is ready" for a first and a second run of the same repository
// (issues 4 and 15).
//
// The repository: 20,000 files in a realistic tree, 300 commits of 30
// changed files each, packed as a clone is, with a .kilroy/ci.dot pipeline.
//
//   - BenchmarkMirrorRun follows a pull request run of the GitHub App
//     (server.Server.HandleRun): a bare mirror per repository in the data
//     dir, fetched, then a worktree of the PR head added from it and the
//     artifact policy resolved. The first run finds no mirror and fetches
//     the whole history; the second run of the same repository (the PR got
//     one more commit) finds the mirror, fetches only what is new and
//     shares its object store. The origin is a local file:// repository,
//     so the first run's fetch has no network in it: on GitHub it costs
//     more, the second run's about the same.
//   - BenchmarkPooledRun is BenchmarkMirrorRun with the server's pool of
//     warm worktrees (runner/wtpool, issue 15): the first run adds its
//     worktree as there; when it ends its worktree is parked (untimed,
//     reported as park-ms); the second run takes it and moves it to the
//     pull request's new commit, cleaning it and writing only the changed
//     files. BenchmarkMirrorRun keeps measuring runs without the pool.
//     Target: second/first at most 0.20, quoted as the median and the
//     minimum and maximum of the per-pair ratios of at least 5 rounds.
//   - BenchmarkLocalRun times runner.PrepareLocal (`kilroy-bot run`): its
//     worktree comes from the user's own repository, whose object store
//     every run shares, so a first and a second run do the same work; the
//     benchmark shows it.
//
// Run them with
//
//	go test -run '^$' -bench . -benchtime 10x ./bench/worktree
//	go test -run '^$' -bench PooledRun -benchtime 5x ./bench/worktree
package worktree
