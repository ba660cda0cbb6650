package queue

import (
	"context"
	"strings"
)

// knownChunk bounds the ids of one lookup statement (SQLite allows 32766
// parameters; Postgres 65535).
const knownChunk = 500

// KnownDeliveries returns which of ids (X-GitHub-Delivery GUIDs) the queue
// has recorded: deliveries it accepted, duplicates included, within the
// 30 days it keeps them. Missed-delivery recovery asks GitHub to redeliver
// only the others. Database failures wrap ErrUnavailable.
func (q *Queue) KnownDeliveries(ctx context.Context, ids []string) (map[string]bool, error) {
	known := make(map[string]bool, len(ids))
	for start := 0; start < len(ids); start += knownChunk {
		chunk := ids[start:min(start+knownChunk, len(ids))]
		if err := q.knownChunk(ctx, chunk, known); err != nil {
			return nil, err
		}
	}
	return known, nil
}

func (q *Queue) knownChunk(ctx context.Context, ids []string, known map[string]bool) error {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	stmt := q.d.rebind(`SELECT delivery_id FROM deliveries WHERE delivery_id IN (` +
		strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + `)`)
	r, err := q.eng.pool().query(ctx, stmt, args...)
	if err != nil {
		return unavailable("known deliveries", err)
	}
	defer r.Close()
	for r.Next() {
		var id string
		if err := r.Scan(&id); err != nil {
			return unavailable("known deliveries", err)
		}
		known[id] = true
	}
	if err := r.Err(); err != nil {
		return unavailable("known deliveries", err)
	}
	return nil
}
