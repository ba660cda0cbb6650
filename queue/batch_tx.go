package queue

import (
	"context"
	"fmt"
	"strings"
)

// insertEvents writes a batch of deliveries in tx and fills replies, one
// per request: a delivery id already stored, or repeated earlier in the
// batch, is a duplicate; every other delivery gets its heads and a row in
// the intake, which the pump turns into an event job (intake.go).
// Statements are multi-row so a batch costs a handful of statements, not
// a handful per delivery. It returns how many rows went into the intake.
func (q *Queue) insertEvents(ctx context.Context, tx txOps, batch []*eventRequest, replies []eventReply) (int, error) {
	now := nowMillis()
	fresh, err := q.insertDeliveries(ctx, tx, batch, now)
	if err != nil {
		return 0, err
	}
	var (
		rows  []any
		heads []PRHead
	)
	for i, r := range batch {
		if !fresh[r.d.ID] {
			replies[i].res.Duplicate = true
			continue
		}
		// Only the first request with an id is fresh.
		delete(fresh, r.d.ID)
		rows = append(rows, r.d.ID, r.ev.Event, string(r.ev.Payload), now)
		heads = append(heads, r.d.Heads...)
	}
	if err := q.upsertHeads(ctx, tx, heads, now); err != nil {
		return 0, err
	}
	n := len(rows) / 4
	if n == 0 {
		return 0, nil
	}
	stmt := q.d.rebind(`INSERT INTO intake (delivery_id, event, payload, received_at) VALUES ` + placeholderRows(n, 4))
	if _, err := tx.exec(ctx, stmt, rows...); err != nil {
		return 0, fmt.Errorf("queue %d deliveries: %w", n, err)
	}
	return n, nil
}

// insertDeliveries records the batch's delivery ids and returns those that
// were new; an id already stored is left alone.
func (q *Queue) insertDeliveries(ctx context.Context, tx txOps, batch []*eventRequest, now int64) (map[string]bool, error) {
	seen := make(map[string]bool, len(batch))
	args := make([]any, 0, 3*len(batch))
	for _, r := range batch {
		if seen[r.d.ID] {
			continue
		}
		seen[r.d.ID] = true
		args = append(args, r.d.ID, r.d.Event, now)
	}
	stmt := q.d.rebind(`INSERT INTO deliveries (delivery_id, event, received_at) VALUES ` +
		placeholderRows(len(args)/3, 3) + ` ON CONFLICT (delivery_id) DO NOTHING RETURNING delivery_id`)
	rows, err := tx.query(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("record %d deliveries: %w", len(seen), err)
	}
	defer rows.Close()
	fresh := make(map[string]bool, len(seen))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("record deliveries: %w", err)
		}
		fresh[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("record deliveries: %w", err)
	}
	return fresh, nil
}

// upsertHeads records SHA→PR mappings in one statement. A key given twice
// keeps its last PR, as one upsert after another would; it is written once
// because Postgres refuses to update a row twice in one statement.
func (q *Queue) upsertHeads(ctx context.Context, tx txOps, heads []PRHead, now int64) error {
	if len(heads) == 0 {
		return nil
	}
	type key struct{ repo, sha string }
	last := make(map[key]int, len(heads))
	for i, h := range heads {
		last[key{h.Repo, h.HeadSHA}] = i
	}
	args := make([]any, 0, 4*len(last))
	for i, h := range heads {
		if last[key{h.Repo, h.HeadSHA}] == i {
			args = append(args, h.Repo, h.HeadSHA, h.PR, now)
		}
	}
	stmt := q.d.rebind(`INSERT INTO pr_heads (repo, head_sha, pr, seen_at) VALUES ` + placeholderRows(len(args)/4, 4) +
		` ON CONFLICT (repo, head_sha) DO UPDATE SET pr = excluded.pr, seen_at = excluded.seen_at`)
	if _, err := tx.exec(ctx, stmt, args...); err != nil {
		return fmt.Errorf("record %d heads: %w", len(last), err)
	}
	return nil
}

// placeholderRows is "(?, ?), (?, ?)" for rows of cols values.
func placeholderRows(rows, cols int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}
