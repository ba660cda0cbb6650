package ghapp

import (
	"context"
	"errors"
	"time"

	"github.com/google/go-github/v92/github"
)

// HookDelivery is one attempt GitHub made at delivering a webhook to the
// App: a redelivery is an attempt of its own under the same GUID.
type HookDelivery struct {
	ID          int64  // the attempt's id, which RedeliverHook takes
	GUID        string // X-GitHub-Delivery, the bot's dedupe key
	Event       string
	Action      string
	StatusCode  int // the bot's answer; 0 when GitHub could not reach it
	Redelivery  bool
	DeliveredAt time.Time
}

// hookDeliveriesPerPage is GitHub's largest page of deliveries.
const hookDeliveriesPerPage = 100

// HookDeliveries lists the attempts at delivering the App's webhooks made
// at or after since, newest first (GET /app/hook/deliveries, as the App).
// GitHub lists newest first, so it stops paging at the first older one.
func (a *App) HookDeliveries(ctx context.Context, since time.Time) ([]HookDelivery, error) {
	var out []HookDelivery
	opts := &github.ListCursorOptions{PerPage: hookDeliveriesPerPage}
	for {
		page, resp, err := a.api.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			return out, a.apiError("list webhook deliveries", Repo{}, err, nil)
		}
		for _, d := range page {
			at := d.GetDeliveredAt().Time
			if at.Before(since) {
				return out, nil
			}
			out = append(out, HookDelivery{
				ID: d.GetID(), GUID: d.GetGUID(), Event: d.GetEvent(), Action: d.GetAction(),
				StatusCode: d.GetStatusCode(), Redelivery: d.GetRedelivery(), DeliveredAt: at,
			})
		}
		if resp.Cursor == "" || len(page) == 0 {
			return out, nil
		}
		opts.Cursor = resp.Cursor
	}
}

// RedeliverHook asks GitHub to deliver the attempt id's delivery again
// (POST /app/hook/deliveries/{id}/attempts, as the App). It is not
// repeated on an ambiguous failure: the webhook's dedupe makes a second
// delivery harmless, but the next recovery pass will ask again anyway.
func (a *App) RedeliverHook(ctx context.Context, id int64) error {
	_, _, err := a.api.Apps.RedeliverHookDelivery(ctx, id)
	// GitHub answers 202 Accepted: it delivers a moment later.
	if accepted := (*github.AcceptedError)(nil); err != nil && !errors.As(err, &accepted) {
		return a.apiError("redeliver webhook delivery", Repo{}, err, nil)
	}
	return nil
}
