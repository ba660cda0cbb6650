package queue

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKnownDeliveries(t *testing.T) {
	q := sqliteOpener(t.TempDir())(t)
	ctx := context.Background()
	// More recorded ids than one lookup statement takes.
	var recorded []string
	for i := range knownChunk + 20 {
		id := fmt.Sprintf("d-%d", i)
		recorded = append(recorded, id)
		if _, err := q.EnqueueEvent(ctx, Delivery{ID: id, Event: "ping"}, EventArgs{Event: "ping", Payload: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		ids  []string
		want map[string]bool
	}{
		{name: "none asked", ids: nil, want: map[string]bool{}},
		{name: "unknown", ids: []string{"x-1", "x-2"}, want: map[string]bool{}},
		{name: "mixed", ids: []string{"d-3", "x-1", "d-0"}, want: map[string]bool{"d-3": true, "d-0": true}},
		{name: "across chunks", ids: append([]string{"x-9"}, recorded...), want: setOf(recorded)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.KnownDeliveries(ctx, tt.ids)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("KnownDeliveries (-got +want):\n%s", diff)
			}
		})
	}
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}
