package queue

import "context"

// Depth counts the runs queued or running, for the queue depth gauge.
// Database failures wrap ErrUnavailable.
func (q *Queue) Depth(ctx context.Context) (int, error) {
	return q.count(ctx, "queue depth", q.q.depth)
}

// IntakeDepth counts the accepted deliveries waiting in the intake to
// become event jobs (intake.go), for the intake depth gauge.
func (q *Queue) IntakeDepth(ctx context.Context) (int, error) {
	return q.count(ctx, "intake depth", `SELECT COUNT(*) FROM intake`)
}

// count runs a SELECT COUNT(*) statement.
func (q *Queue) count(ctx context.Context, op, stmt string) (int, error) {
	r, err := q.eng.pool().query(ctx, stmt)
	if err != nil {
		return 0, unavailable(op, err)
	}
	defer r.Close()
	n := 0
	if r.Next() {
		if err := r.Scan(&n); err != nil {
			return 0, unavailable(op, err)
		}
	}
	if err := r.Err(); err != nil {
		return 0, unavailable(op, err)
	}
	return n, nil
}

// Ping checks that the database answers, for readiness probes. It fails
// with ErrUnavailable when it does not.
func (q *Queue) Ping(ctx context.Context) error {
	r, err := q.eng.pool().query(ctx, q.q.ping)
	if err != nil {
		return unavailable("ping", err)
	}
	defer r.Close()
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		return unavailable("ping", err)
	}
	return nil
}
