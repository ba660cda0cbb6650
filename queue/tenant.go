package queue

import (
	"context"
	"fmt"
	"strings"
)

// What retention and uninstalls ask of the queue. The retention sweep
// (runner/gc) deletes a run's directory and branches only when the queue
// says the run is not active; an uninstall (installation deleted, or
// repositories removed from it) cancels a repository's runs, waits until no
// worker holds one, and then forgets the repository's rows.

// Active returns which of ids are runs the queue may still hand to a
// worker or that a worker still holds: queued or running (an interrupted
// run is running until reclaimed, then queued, and resumes from its
// directory), or in a final state with an owner whose handler has not
// returned yet. Unknown ids (never enqueued, or pruned after the 30 days
// finished runs are kept) are not active.
func (q *Queue) Active(ctx context.Context, ids []string) (map[string]bool, error) {
	active := make(map[string]bool)
	for start := 0; start < len(ids); start += knownChunk {
		chunk := ids[start:min(start+knownChunk, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		stmt := q.d.rebind(`SELECT run_id FROM runs WHERE (state IN ('queued', 'running') OR owner <> '')
			AND run_id IN (` + placeholders(len(chunk)) + `)`)
		if err := q.scanStrings(ctx, "active runs", stmt, args, func(id string) { active[id] = true }); err != nil {
			return nil, err
		}
	}
	return active, nil
}

// ReposOfOwner lists the repositories (owner/name) of account owner that
// the queue has rows of, compared without case as GitHub does.
func (q *Queue) ReposOfOwner(ctx context.Context, owner string) ([]string, error) {
	prefix := strings.ToLower(owner) + "/"
	stmt := q.d.rebind(`SELECT repo FROM runs WHERE LOWER(SUBSTR(repo, 1, ?)) = ?
		UNION SELECT repo FROM pr_heads WHERE LOWER(SUBSTR(repo, 1, ?)) = ?`)
	var repos []string
	err := q.scanStrings(ctx, "repositories of "+owner, stmt, []any{len(prefix), prefix, len(prefix), prefix},
		func(r string) { repos = append(repos, r) })
	return repos, err
}

// RunsOfRepo lists every run of repo the queue has a row of, in any state.
func (q *Queue) RunsOfRepo(ctx context.Context, repo string) ([]Run, error) {
	runs, err := queryRuns(ctx, q.eng.pool(), q.d.rebind(`SELECT `+runColumns+` FROM runs WHERE repo = ? ORDER BY created_at`), repo)
	if err != nil {
		return nil, unavailable("runs of "+repo, err)
	}
	return runs, nil
}

// CancelRepo cancels every unfinished run of repo, of every pull request
// and pipeline, recording by; it returns them with the state they were in.
// Running handlers see their context cancelled with a *CancelledError.
func (q *Queue) CancelRepo(ctx context.Context, repo, by string) ([]Run, error) {
	var stopped []Superseded
	err := q.eng.inTx(ctx, func(tx txOps) error {
		runs, err := queryRuns(ctx, tx, q.d.rebind(`SELECT `+runColumns+` FROM runs
			WHERE repo = ? AND state IN ('queued', 'running') ORDER BY created_at`), repo)
		if err != nil {
			return err
		}
		now := nowMillis()
		for _, r := range runs {
			if _, err := tx.exec(ctx, q.q.stopRun, stateCancelled, by, now, r.ID); err != nil {
				return fmt.Errorf("stop run %s: %w", r.ID, err)
			}
			if err := tx.cancelJob(ctx, r.JobID); err != nil {
				return fmt.Errorf("cancel job %d of run %s: %w", r.JobID, r.ID, err)
			}
			stopped = append(stopped, Superseded{Run: r, By: by})
		}
		return nil
	})
	if err != nil {
		return nil, unavailable("cancel the runs of "+repo, err)
	}
	q.signalStopped(stopped, stateCancelled)
	runs := make([]Run, 0, len(stopped))
	for _, s := range stopped {
		runs = append(runs, s.Run)
	}
	return runs, nil
}

// ForgetRepo deletes what the queue keeps of repo: its finished runs that
// no worker holds, their waiting nodes, answers and resumable state
// (checkpoints, graph), and its pull requests' heads. It returns how many runs it kept because they are still active
// (cancel them first and call again once their handlers returned).
func (q *Queue) ForgetRepo(ctx context.Context, repo string) (kept int, err error) {
	err = q.eng.inTx(ctx, func(tx txOps) error {
		done := `SELECT run_id FROM runs WHERE repo = ? AND owner = '' AND state NOT IN ('queued', 'running')`
		for _, stmt := range []string{
			`DELETE FROM waiting WHERE run_id IN (` + done + `)`,
			`DELETE FROM answers WHERE run_id IN (` + done + `)`,
			`DELETE FROM run_state WHERE run_id IN (` + done + `)`,
			`DELETE FROM run_checkpoints WHERE run_id IN (` + done + `)`,
			`DELETE FROM runs WHERE repo = ? AND owner = '' AND state NOT IN ('queued', 'running')`,
			`DELETE FROM pr_heads WHERE repo = ?`,
		} {
			if _, err := tx.exec(ctx, q.d.rebind(stmt), repo); err != nil {
				return err
			}
		}
		r, err := tx.query(ctx, q.d.rebind(`SELECT COUNT(*) FROM runs WHERE repo = ?`), repo)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			if err := r.Scan(&kept); err != nil {
				return err
			}
		}
		return r.Err()
	})
	if err != nil {
		return 0, unavailable("forget "+repo, err)
	}
	return kept, nil
}

// ForgetInstallation deletes what the scheduler remembers of an
// installation the App was removed from.
func (q *Queue) ForgetInstallation(ctx context.Context, id int64) error {
	if _, err := q.eng.pool().exec(ctx, q.d.rebind(`DELETE FROM sched_installations WHERE installation_id = ?`), id); err != nil {
		return unavailable(fmt.Sprintf("forget installation %d", id), err)
	}
	return nil
}

// scanStrings runs a query of one text column and hands each value to f.
func (q *Queue) scanStrings(ctx context.Context, what, stmt string, args []any, f func(string)) error {
	r, err := q.eng.pool().query(ctx, stmt, args...)
	if err != nil {
		return unavailable(what, err)
	}
	defer r.Close()
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			return unavailable(what, err)
		}
		f(s)
	}
	if err := r.Err(); err != nil {
		return unavailable(what, err)
	}
	return nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
