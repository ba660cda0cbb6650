// Package webhook benchmarks the acknowledgement of signed pull_request
// deliveries by `kilroy-bot serve` (issue 5: p99 under 50 ms and at least
// half the throughput of a handler that only checks the HMAC).
//
// The bot side is the real server: the kilroy-bot binary, built from this
// checkout, serving on loopback with its SQLite queue in a temporary data
// dir. Its GitHub is a stub that answers 404, so the event workers that
// decide the queued deliveries find nothing to run; they still compete for
// the database as they would in production. The baseline is an in-process
// handler that reads the body, verifies X-Hub-Signature-256 and answers
// 202. Both get the same load in the same run: a fixed number of
// deliveries (each its own X-GitHub-Delivery id, the body of GitHub's real
// pull_request/opened payload, 28 KB, from the shared test data; the small
// webhook/testdata fixture when that is absent) from 32 concurrent senders
// with keep-alive connections. A 202 means the delivery is committed to the
// queue's intake (queue/intake.go); the benchmark also reports how
// long after the last acknowledgement every delivery had become an event
// job, and the rate from the first send to that point, so the deferred
// part of the work is measured too. After the bot is stopped the
// benchmark counts the deliveries and event jobs in its database: every
// delivery answered 202 must be there.
//
// Run it with
//
//	go test -run '^$' -bench Webhook -benchtime 1x ./bench/webhook
//
// and -deliveries N to change the count (default 4000).
package webhook
