package queue

import (
	"context"
	"fmt"
	"time"
)

// SeenHead is a head SHA of a pull request and when the queue last heard
// of it as the head: the delivery that named it (Delivery.Heads) or a run
// enqueued on it. The time is never earlier than the push that made it
// the head, which is what the approval of an untrusted pull request relies
// on: a head seen after a comment may have been pushed after it.
type SeenHead struct {
	SHA    string
	SeenAt time.Time
}

// HeadsOfPR lists the heads recorded for pull request pr of repo, oldest
// first; heads not heard of for the retention period are gone.
func (q *Queue) HeadsOfPR(ctx context.Context, repo string, pr int) ([]SeenHead, error) {
	what := fmt.Sprintf("heads of %s#%d", repo, pr)
	r, err := q.eng.pool().query(ctx, q.q.headsOfPR, repo, pr)
	if err != nil {
		return nil, unavailable(what, err)
	}
	defer r.Close()
	var heads []SeenHead
	for r.Next() {
		var (
			h  SeenHead
			ms int64
		)
		if err := r.Scan(&h.SHA, &ms); err != nil {
			return nil, unavailable(what, err)
		}
		h.SeenAt = time.UnixMilli(ms)
		heads = append(heads, h)
	}
	if err := r.Err(); err != nil {
		return nil, unavailable(what, err)
	}
	return heads, nil
}
