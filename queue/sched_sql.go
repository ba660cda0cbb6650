package queue

// schedSchema holds the scheduler's tables, beside runs: which
// installation and repository each unfinished run belongs to and whether
// it was dispatched to a worker, and when each installation last had a
// run dispatched. A run's row goes once the run is finished.
func schedSchema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS sched (
	run_id TEXT PRIMARY KEY,
	installation_id BIGINT NOT NULL,
	repo TEXT NOT NULL,
	queued_at BIGINT NOT NULL,
	job_id BIGINT NOT NULL,
	dispatched_at BIGINT NOT NULL DEFAULT 0, -- 0 while it waits for the scheduler
	dispatched_by TEXT NOT NULL DEFAULT '',  -- the process that dispatched it
	waiting TEXT NOT NULL DEFAULT ''         -- the cap it last waited for
)`,
		`CREATE INDEX IF NOT EXISTS sched_waiting ON sched (dispatched_at, installation_id, repo, queued_at)`,
		`CREATE TABLE IF NOT EXISTS sched_installations (
	installation_id BIGINT PRIMARY KEY,
	last_started BIGINT NOT NULL
)`,
	}
}

// schedQueries are the scheduler's statements, rebound for the dialect.
type schedQueries struct {
	lock         string // serialises dispatch passes across processes; "" for SQLite
	insert       string
	clean        string
	anyWaiting   string
	dispatchedBy string // dispatched, not yet started, by this process
	snapshot     string
	dispatch     string
	touch        string
	capped       string
	markWaiting  string
	untold       string
}

// unfinishedSched joins a sched row to its run while the run is queued or
// running.
const unfinishedSched = ` FROM sched s JOIN runs r ON r.run_id = s.run_id `

func newSchedQueries(d dialect) schedQueries {
	q := schedQueries{
		insert: d.rebind(`INSERT INTO sched (run_id, installation_id, repo, queued_at, job_id) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (run_id) DO NOTHING`),
		clean: `DELETE FROM sched WHERE NOT EXISTS (SELECT 1 FROM runs r
			WHERE r.run_id = sched.run_id AND r.state IN ('queued', 'running'))`,
		anyWaiting: `SELECT COUNT(*) FROM sched WHERE dispatched_at = 0`,
		dispatchedBy: d.rebind(`SELECT COUNT(*)` + unfinishedSched +
			`WHERE s.dispatched_at > 0 AND r.state = 'queued' AND s.dispatched_by = ?`),
		// Going: running, or dispatched and not yet started (a run handed
		// back after an interruption keeps its dispatch).
		// One statement, one round trip: rows of kind 0 count the runs
		// going by repository, kind 1 are the waiting groups with their
		// oldest run, kind 2 the installations' last dispatch.
		snapshot: `SELECT 0, s.installation_id, s.repo, COUNT(*)` + unfinishedSched +
			`WHERE r.state = 'running' OR (r.state = 'queued' AND s.dispatched_at > 0)
			GROUP BY s.installation_id, s.repo
			UNION ALL
			SELECT 1, s.installation_id, s.repo, MIN(s.queued_at)` + unfinishedSched +
			`WHERE s.dispatched_at = 0 AND r.state = 'queued' GROUP BY s.installation_id, s.repo
			UNION ALL
			SELECT 2, installation_id, '', last_started FROM sched_installations
			WHERE installation_id IN (SELECT installation_id FROM sched WHERE dispatched_at = 0)`,
		// Dispatches the oldest queued run of a repository; runs queued in
		// the same millisecond go in insertion order (River's job id: a
		// run id's ULID is random within its millisecond).
		dispatch: d.rebind(`UPDATE sched SET dispatched_at = ?, dispatched_by = ?, waiting = ''
			WHERE run_id = (SELECT s.run_id` + unfinishedSched +
			`WHERE s.dispatched_at = 0 AND s.installation_id = ? AND s.repo = ? AND r.state = 'queued'
				ORDER BY s.queued_at, s.job_id LIMIT 1)
			RETURNING run_id, job_id`),
		touch: d.rebind(`INSERT INTO sched_installations (installation_id, last_started) VALUES (?, ?)
			ON CONFLICT (installation_id) DO UPDATE SET last_started = excluded.last_started`),
		// The runs of a group not yet told why they wait.
		capped: d.rebind(`SELECT s.run_id` + unfinishedSched +
			`WHERE s.dispatched_at = 0 AND s.installation_id = ? AND s.repo = ? AND r.state = 'queued'
			AND s.waiting <> ? ORDER BY s.queued_at, s.job_id`),
		markWaiting: d.rebind(`UPDATE sched SET waiting = ? WHERE run_id = ? AND dispatched_at = 0`),
		untold:      d.rebind(`UPDATE sched SET waiting = '' WHERE run_id = ? AND waiting = ?`),
	}
	if d.schemaLock != "" {
		// Another constant key than the schema lock's: "kilroz".
		q.lock = `SELECT pg_advisory_xact_lock(107105108114111122)`
	}
	return q
}
