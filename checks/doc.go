// Package checks renders a pipeline run as GitHub Check Runs and as the
// markdown report of a local run.
//
// The model: a Recorder listens to the engine (it implements
// attractor.Listener) and keeps a RunView, one NodeView per pipeline node
// with its state, attempts, duration, last outcome, findings and
// checkpoint commit, plus the transitions taken. When the run ends, every
// node that never ran becomes skipped with a reason a reader can act on
// ("not on the path taken: vet failed", "superseded by 1a2b3c4").
//
// Rendering is pure and works on a snapshot of that view: Summary produces
// the title, summary and text of the `kilroy/<pipeline>` check (node
// table, a Mermaid flowchart coloured by state, what was skipped and why);
// VerifyCheck produces the `kilroy/<pipeline>/<node>` check of a verify
// node with its conclusion and annotations. Everything rendered passes
// through a Redactor before it is cut to GitHub's limits, so neither a
// secret nor half of one reaches GitHub or a report file.
//
// A Publisher is the listener that puts those renderings on GitHub for one
// run: it keeps the body every check should show, sends changes from a
// background goroutine (in-progress updates throttled; changes of status,
// completions included, and annotation batches at once), keeps what a
// failed call did not deliver for the next round, and on Close, Cancel or
// Fail completes every check it created. It calls GitHub through the small API interface that
// *ghapp.Client satisfies.
package checks
