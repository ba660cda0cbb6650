// Package appsrv wires a server.Server to an App the way `kilroy-bot
// serve` does, for the benchmarks under bench/ that drive the GitHub App's
// real run path against the fake GitHub (ghapp/ghapptest).
//
// cmd/kilroy-bot is a main package and cannot be imported, so the two
// adapters it writes are written again here, cut to what a benchmark needs:
// GitHub is server.GitHub over an installation's client, and Reporters
// makes each run's Reporter: a checks.Publisher that creates and completes
// the run's check runs on the fake GitHub, without the run page's
// report.md, the metrics listener or the redactor serve adds.
package appsrv
