package queue

import (
	"strconv"
	"strings"
)

// Run states in the runs table. queued and running are unfinished; the
// others are final.
const (
	stateQueued     = "queued"
	stateRunning    = "running"
	stateDone       = "done"
	stateFailed     = "failed"
	stateCancelled  = "cancelled"
	stateSuperseded = "superseded"
)

// schema returns our own tables, beside River's. Plain types only (TEXT,
// BIGINT, INTEGER) and times as Unix milliseconds, so the same DDL and
// statements run on SQLite and Postgres.
func schema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS deliveries (
	delivery_id TEXT PRIMARY KEY,
	event TEXT NOT NULL,
	received_at BIGINT NOT NULL
)`,
		`CREATE INDEX IF NOT EXISTS deliveries_received_at ON deliveries (received_at)`,
		`CREATE TABLE IF NOT EXISTS runs (
	run_id TEXT PRIMARY KEY,
	repo TEXT NOT NULL,
	pr BIGINT NOT NULL,
	head_sha TEXT NOT NULL,
	pipeline TEXT NOT NULL,
	state TEXT NOT NULL,
	job_id BIGINT NOT NULL,
	superseded_by TEXT NOT NULL DEFAULT '', -- superseding SHA, or who cancelled
	owner TEXT NOT NULL DEFAULT '',
	heartbeat_at BIGINT NOT NULL DEFAULT 0,
	resumes INTEGER NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
)`,
		`CREATE INDEX IF NOT EXISTS runs_by_pr ON runs (repo, pr, pipeline, state)`,
		`CREATE INDEX IF NOT EXISTS runs_by_owner ON runs (owner, heartbeat_at)`,
		// Fork PRs' check_run payloads carry no pull_requests: this maps a head
		// SHA back to its PR, also for gated PRs that have no run yet.
		`CREATE TABLE IF NOT EXISTS pr_heads (
	repo TEXT NOT NULL,
	head_sha TEXT NOT NULL,
	pr BIGINT NOT NULL,
	seen_at BIGINT NOT NULL,
	PRIMARY KEY (repo, head_sha)
)`,
		`CREATE INDEX IF NOT EXISTS pr_heads_seen_at ON pr_heads (seen_at)`,
		// Accepted deliveries waiting to become event jobs (intake.go).
		`CREATE TABLE IF NOT EXISTS intake (
	delivery_id TEXT PRIMARY KEY,
	event TEXT NOT NULL,
	payload TEXT NOT NULL,
	received_at BIGINT NOT NULL
)`,
		`CREATE INDEX IF NOT EXISTS intake_received_at ON intake (received_at, delivery_id)`,
		// wait.human nodes waiting for `/kilroy answer`, and the answers
		// given, until the run takes them (answers.go).
		`CREATE TABLE IF NOT EXISTS waiting (
	run_id TEXT NOT NULL,
	node TEXT NOT NULL,
	question TEXT NOT NULL,
	since BIGINT NOT NULL,
	PRIMARY KEY (run_id, node)
)`,
		`CREATE INDEX IF NOT EXISTS waiting_since ON waiting (since)`,
		`CREATE TABLE IF NOT EXISTS answers (
	run_id TEXT NOT NULL,
	node TEXT NOT NULL,
	choice TEXT NOT NULL,
	answered_by TEXT NOT NULL,
	answered_at BIGINT NOT NULL,
	PRIMARY KEY (run_id, node)
)`,
		`CREATE INDEX IF NOT EXISTS answers_answered_at ON answers (answered_at)`,
	}
}

// runColumns is the column list scanRun reads, in order.
const runColumns = `run_id, repo, pr, head_sha, pipeline, state, job_id, superseded_by, owner, heartbeat_at, resumes`

// queries holds every statement, written once with ? placeholders and
// rebound for the dialect when the queue opens.
type queries struct {
	insertDelivery     string
	pruneDeliveries    string
	pruneRuns          string
	pruneHeads         string
	upsertHead         string
	lookupHead         string
	headsOfPR          string
	insertRun          string
	unfinishedRuns     string
	unfinishedRunsOfPR string
	unfinishedOfHead   string
	stopRun            string
	claimRun           string
	getRun             string
	finishRun          string
	requeueRun         string
	heartbeat          string
	interrupted        string
	reclaimRun         string
	requeueJob         string
	stoppedHeld        string
	requeueOrphanJobs  string
	depth              string
	ping               string
	takeIntake         string
	wait               string
	waitingQuestion    string
	stopWaiting        string
	dropAnswer         string
	waitingOfPR        string
	recordAnswer       string
	takeAnswer         string
	pruneWaiting       string
	pruneAnswers       string
}

func newQueries(d dialect) queries {
	return queries{
		insertDelivery: d.rebind(`INSERT INTO deliveries (delivery_id, event, received_at) VALUES (?, ?, ?)
			ON CONFLICT (delivery_id) DO NOTHING`),
		pruneDeliveries: d.rebind(`DELETE FROM deliveries WHERE received_at < ?`),
		pruneRuns: d.rebind(`DELETE FROM runs WHERE updated_at < ? AND owner = ''
			AND state IN ('done', 'failed', 'cancelled', 'superseded')`),
		pruneHeads: d.rebind(`DELETE FROM pr_heads WHERE seen_at < ?`),
		upsertHead: d.rebind(`INSERT INTO pr_heads (repo, head_sha, pr, seen_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (repo, head_sha) DO UPDATE SET pr = excluded.pr, seen_at = excluded.seen_at`),
		lookupHead: d.rebind(`SELECT pr FROM pr_heads WHERE repo = ? AND head_sha = ?`),
		headsOfPR:  d.rebind(`SELECT head_sha, seen_at FROM pr_heads WHERE repo = ? AND pr = ? ORDER BY seen_at, head_sha`),
		insertRun: d.rebind(`INSERT INTO runs (run_id, repo, pr, head_sha, pipeline, state, job_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)`),
		// head_sha <> ? with '' matches every SHA: Cancel uses that.
		unfinishedRuns: d.rebind(`SELECT ` + runColumns + ` FROM runs
			WHERE repo = ? AND pr = ? AND pipeline = ? AND head_sha <> ? AND state IN ('queued', 'running')
			ORDER BY created_at`),
		unfinishedRunsOfPR: d.rebind(`SELECT ` + runColumns + ` FROM runs
			WHERE repo = ? AND pr = ? AND head_sha <> ? AND state IN ('queued', 'running')
			ORDER BY created_at`),
		unfinishedOfHead: d.rebind(`SELECT ` + runColumns + ` FROM runs
			WHERE repo = ? AND head_sha = ? AND state IN ('queued', 'running')
			ORDER BY created_at`),
		stopRun: d.rebind(`UPDATE runs SET state = ?, superseded_by = ?, updated_at = ?
			WHERE run_id = ? AND state IN ('queued', 'running')`),
		claimRun: d.rebind(`UPDATE runs SET state = 'running', owner = ?, heartbeat_at = ?, updated_at = ?
			WHERE run_id = ? AND state = 'queued'`),
		getRun: d.rebind(`SELECT ` + runColumns + ` FROM runs WHERE run_id = ?`),
		// Final states set by Cancel or supersede stay; only running ends here.
		finishRun: d.rebind(`UPDATE runs SET state = CASE WHEN state = 'running' THEN ? ELSE state END,
			owner = '', updated_at = ? WHERE run_id = ? AND owner = ?`),
		requeueRun: d.rebind(`UPDATE runs SET state = CASE WHEN state = 'running' THEN 'queued' ELSE state END,
			owner = '', resumes = resumes + 1, updated_at = ? WHERE run_id = ? AND owner = ?`),
		stoppedHeld: d.rebind(`SELECT run_id, state, superseded_by FROM runs
			WHERE owner = ? AND state IN ('superseded', 'cancelled')`),
		heartbeat: d.rebind(`UPDATE runs SET heartbeat_at = ? WHERE owner = ?`),
		interrupted: d.rebind(`SELECT ` + runColumns + ` FROM runs
			WHERE owner <> '' AND owner <> ? AND heartbeat_at < ? ORDER BY created_at`),
		reclaimRun: d.rebind(`UPDATE runs SET state = CASE WHEN state = 'running' THEN 'queued' ELSE state END,
			owner = '', resumes = resumes + 1, updated_at = ? WHERE run_id = ? AND owner = ? AND heartbeat_at < ?`),
		// The one statement on River's table: River has no public call to
		// take back a running job whose process died (its rescuer only acts
		// on elapsed time, which we switch off), and making it available
		// again is the state River itself would give it on a retry.
		requeueJob: d.rebind(`UPDATE river_job SET state = 'available' WHERE id = ? AND state = 'running'`),
		// Only for a database one process owns, before River starts: a job
		// still running then belongs to a process that died between River
		// fetching it and our claim or between our release and River's
		// completion. The worker sorts it out from the run's state.
		depth: `SELECT COUNT(*) FROM runs WHERE state IN ('queued', 'running')`,
		ping:  `SELECT 1`,
		// One more row than asked for says whether more wait, and since when.
		takeIntake: d.rebind(`SELECT delivery_id, event, payload, received_at FROM intake
			ORDER BY received_at, delivery_id LIMIT ?` + d.lockRows),
		requeueOrphanJobs: `UPDATE river_job SET state = 'available' WHERE state = 'running' AND kind IN ('kilroy.run', 'kilroy.event')`,
		wait: d.rebind(`INSERT INTO waiting (run_id, node, question, since) VALUES (?, ?, ?, ?)
			ON CONFLICT (run_id, node) DO UPDATE SET question = excluded.question, since = excluded.since`),
		waitingQuestion: d.rebind(`SELECT question FROM waiting WHERE run_id = ? AND node = ?`),
		stopWaiting:     d.rebind(`DELETE FROM waiting WHERE run_id = ? AND node = ?`),
		dropAnswer:      d.rebind(`DELETE FROM answers WHERE run_id = ? AND node = ?`),
		// Only unfinished runs: a row a dead process left is not listed.
		waitingOfPR: d.rebind(`SELECT w.run_id, r.pipeline, r.head_sha, w.node, w.question, w.since
			FROM waiting w JOIN runs r ON r.run_id = w.run_id
			WHERE r.repo = ? AND r.pr = ? AND r.state IN ('queued', 'running')
			ORDER BY w.since, w.run_id, w.node`),
		// One statement, so an answer is stored only while its node waits;
		// the casts type the parameters for Postgres. The WHERE also keeps
		// SQLite from reading ON CONFLICT as a join's ON.
		recordAnswer: d.rebind(`INSERT INTO answers (run_id, node, choice, answered_by, answered_at)
			SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)
			WHERE EXISTS (SELECT 1 FROM waiting WHERE run_id = ? AND node = ?)
			ON CONFLICT (run_id, node) DO UPDATE SET choice = excluded.choice,
				answered_by = excluded.answered_by, answered_at = excluded.answered_at`),
		takeAnswer:   d.rebind(`DELETE FROM answers WHERE run_id = ? AND node = ? RETURNING choice, answered_by`),
		pruneWaiting: d.rebind(`DELETE FROM waiting WHERE since < ?`),
		pruneAnswers: d.rebind(`DELETE FROM answers WHERE answered_at < ?`),
	}
}

// dialect is what differs between the databases in our own SQL.
type dialect struct {
	name string
	// dollar placeholders ($1, $2, …) instead of ?.
	dollar bool
	// schemaLock serialises migrations across processes; empty if not needed.
	schemaLock string
	// exclusive means one process owns the database (SQLite in the data
	// dir), so at start every run held by another owner is interrupted,
	// however fresh its heartbeat.
	exclusive bool
	// lockRows is appended to the intake pump's SELECT so that the pumps of
	// several replicas take different rows.
	lockRows string
}

func dialectSQLite() dialect { return dialect{name: "sqlite", exclusive: true} }

func dialectPostgres() dialect {
	// An arbitrary constant key for the advisory lock: "kilroy" in ASCII.
	return dialect{name: "postgres", dollar: true, lockRows: ` FOR UPDATE SKIP LOCKED`, schemaLock: `SELECT pg_advisory_xact_lock(107105108114111121)`}
}

// rebind turns ? placeholders into $n for Postgres. Our statements hold no
// ? inside literals, so a plain scan is enough.
func (d dialect) rebind(q string) string {
	if !d.dollar {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
