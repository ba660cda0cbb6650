package redeliver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// fakeHooks is GitHub's delivery log: it lists attempts since a time and
// records what it is asked to redeliver, failing the ids in fail.
type fakeHooks struct {
	attempts    []ghapp.HookDelivery
	since       time.Time
	redelivered []int64
	fail        map[int64]bool
}

func (f *fakeHooks) HookDeliveries(_ context.Context, since time.Time) ([]ghapp.HookDelivery, error) {
	f.since = since
	var out []ghapp.HookDelivery
	for _, d := range f.attempts {
		if !d.DeliveredAt.Before(since) {
			out = append(out, d)
		}
	}
	return out, nil
}

func (f *fakeHooks) RedeliverHook(_ context.Context, id int64) error {
	if f.fail[id] {
		return errors.New("502 Bad Gateway")
	}
	f.redelivered = append(f.redelivered, id)
	return nil
}

type fakeRecorded map[string]bool

func (f fakeRecorded) KnownDeliveries(_ context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		if f[id] {
			out[id] = true
		}
	}
	return out, nil
}

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func attempt(id int64, guid string, status int) ghapp.HookDelivery {
	return ghapp.HookDelivery{ID: id, GUID: guid, Event: "pull_request", StatusCode: status, DeliveredAt: now.Add(-time.Hour)}
}

func TestPass(t *testing.T) {
	old := attempt(1, "old", 503)
	old.DeliveredAt = now.Add(-DefaultWindow - time.Minute)
	tests := []struct {
		name     string
		attempts []ghapp.HookDelivery
		recorded fakeRecorded
		want     []int64
	}{
		{name: "answered 503", attempts: []ghapp.HookDelivery{attempt(10, "a", 503)}, want: []int64{10}},
		{name: "not delivered", attempts: []ghapp.HookDelivery{attempt(10, "a", 0)}, want: []int64{10}},
		{name: "accepted", attempts: []ghapp.HookDelivery{attempt(10, "a", 202), attempt(11, "b", 200)}},
		{name: "refused 4xx is an answer", attempts: []ghapp.HookDelivery{attempt(10, "a", 401), attempt(11, "b", 413)}},
		{name: "recorded though answered 503", attempts: []ghapp.HookDelivery{attempt(10, "a", 503)},
			recorded: fakeRecorded{"a": true}},
		{name: "a later attempt succeeded", attempts: []ghapp.HookDelivery{attempt(12, "a", 202), attempt(10, "a", 503)}},
		{name: "newest failed attempt is redelivered",
			attempts: []ghapp.HookDelivery{attempt(12, "a", 0), attempt(10, "a", 503), attempt(11, "b", 502)},
			want:     []int64{11, 12}},
		{name: "gives up after MaxAttempts", attempts: []ghapp.HookDelivery{
			attempt(1, "a", 503), attempt(2, "a", 503), attempt(3, "a", 503), attempt(4, "a", 503),
			attempt(5, "a", 503), attempt(6, "a", 503), attempt(7, "a", 503), attempt(8, "a", 503)}},
		{name: "outside the window", attempts: []ghapp.HookDelivery{old}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hooks := &fakeHooks{attempts: tt.attempts}
			r := New(hooks, tt.recorded, Options{Now: func() time.Time { return now }})
			if _, err := r.Pass(t.Context()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(hooks.redelivered, tt.want); diff != "" {
				t.Errorf("redelivered attempts (-got +want):\n%s", diff)
			}
			if want := now.Add(-DefaultWindow); !hooks.since.Equal(want) {
				t.Errorf("listed since %v, want %v", hooks.since, want)
			}
		})
	}
}

func TestPassDoesNotAskTwiceWhileARedeliveryIsPending(t *testing.T) {
	hooks := &fakeHooks{attempts: []ghapp.HookDelivery{attempt(10, "a", 503), attempt(11, "b", 503)},
		fail: map[int64]bool{11: true}}
	clock := now
	r := New(hooks, fakeRecorded{}, Options{Now: func() time.Time { return clock }})
	res, err := r.Pass(t.Context())
	if err == nil {
		t.Error("a failed redelivery was not reported")
	}
	if diff := cmp.Diff(res.Redelivered, []string{"a"}); diff != "" {
		t.Errorf("first pass redelivered (-got +want):\n%s", diff)
	}
	// GitHub has not listed the new attempt of a yet: a is not asked for
	// again, b (whose request failed) is.
	delete(hooks.fail, 11)
	clock = clock.Add(pending / 2)
	if res, _ := r.Pass(t.Context()); !cmp.Equal(res.Redelivered, []string{"b"}) {
		t.Errorf("second pass redelivered %v, want [b]", res.Redelivered)
	}
	// A redelivery that never showed up is asked for again.
	clock = clock.Add(pending)
	if res, _ := r.Pass(t.Context()); !cmp.Equal(res.Redelivered, []string{"a", "b"}) {
		t.Errorf("third pass redelivered %v, want [a b]", res.Redelivered)
	}
}
