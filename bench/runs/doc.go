// Package runs benchmarks the GitHub App's run path end to end at volume,
// and the retention sweep after it (issue 13): by default 1,000 pull
// request runs of a one-node pipeline (a `true` tool node between start
// and exit) on four repositories of two installations, through the queue,
// on SQLite (one server) and on Postgres (two replicas sharing the
// database, each with its own data dir).
//
// What a run goes through is the server's: a pull_request delivery is
// accepted (server.Server.Accept, the webhook's enqueue), its event job
// decided (HandleEvent: trust, the mirror fetched, the config read at the
// head, the run enqueued and its checks created queued), then the run job
// worked (HandleRun: fresh tokens, fetch into the mirror, a worktree in the
// run dir, three checkpoint commits, the run branch pushed, the checks
// completed), all against the fake GitHub (ghapp/ghapptest), which serves
// git over git-http-backend and validates every check-run request. Real
// git, real run dirs, the real queue, and serve's own GitHub adapter
// (ghserver: redaction, the checks publisher, the metrics listener, the
// run page's report.md), built as serve builds it (serverOptions says what
// it leaves out). Not included: the sandbox (off, as
// `serve --insecure-no-sandbox`; serve then keeps no pool of warm
// worktrees either, so every run checks out its own) and the HTTP webhook
// in front of Accept (bench/webhook measures that).
//
// The runs go in two batches: all but the newest -keep runs, then, once
// those have finished and the clock has passed the next whole second (the
// resolution of git's commit times), the newest -keep. The sweep runs with
// its clock set one window after that second, so exactly the first batch
// is older than the window. The benchmark fails (b.Fatal) when a run
// failed, when after the sweep a data dir still holds a run directory or a
// run branch of the first batch, or when the sweep removed one of the
// newest runs. Run branches on the fake GitHub stay: deleting them there is
// off by default (retention.remote_branches).
//
// Reported: runs/s (all runs over the time the two batches took, the wait
// between them left out); p50-ms and p99-ms from a delivery's Accept to the
// end of its run's handler, which for a batch delivered at once is mostly
// the wait in the queue; run-p50-ms and run-p99-ms, the run handler alone;
// and for all data dirs together, before and
// after the sweep, bytes (every file: mirrors, run dirs, the SQLite
// database, which grows a little with the sweep's queries), run-bytes (the
// files in runs/), rundirs and branches (run branches in the mirrors).
//
// Run it with (one round: the -benchtime 1x is what a round of 1,000 real
// runs wants; Postgres needs initdb and pg_ctl, else it skips)
//
//	go test -run '^$' -bench Runs -benchtime 1x -timeout 60m ./bench/runs
//	go test -run '^$' -bench Runs/sqlite -benchtime 1x ./bench/runs -runs 200 -keep 20
package runs
