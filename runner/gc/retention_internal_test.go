package gc

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

func TestExpired(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		age    time.Duration
		window time.Duration
		active bool
		want   bool
	}{
		{name: "older than the window", age: 15 * 24 * time.Hour, window: 14 * 24 * time.Hour, want: true},
		{name: "within the window", age: 13 * 24 * time.Hour, window: 14 * 24 * time.Hour},
		{name: "exactly the window", age: time.Hour, window: time.Hour},
		{name: "active, however old", age: 365 * 24 * time.Hour, window: time.Hour, active: true},
		{name: "zero window keeps forever", age: 365 * 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := expired(now.Add(-tt.age), now, tt.window, tt.active); got != tt.want {
				t.Errorf("expired(age %s, window %s, active %v) = %v, want %v", tt.age, tt.window, tt.active, got, tt.want)
			}
		})
	}
}

func TestBranchRunID(t *testing.T) {
	at := time.Date(2026, 2, 1, 8, 30, 0, 0, time.UTC)
	id := ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()).String()
	tests := []struct {
		branch string
		wantID string
	}{
		{branch: "kilroy/run/ci/" + id, wantID: id},
		{branch: "kilroy/run/nested/name/" + id, wantID: id},
		{branch: "kilroy/run/" + id},                  // no pipeline
		{branch: "kilroy/other/ci/" + id},             // another bot namespace
		{branch: "main"},                              // not the bot's
		{branch: "feature/run/ci/" + id},              // not the bot's
		{branch: "kilroy/run/ci/not-a-run-id"},        // not a run id
		{branch: "kilroy/run/ci/" + lowerCase(id)},    // run ids are upper case
		{branch: "kilroy/run/ci/" + id + "/leftover"}, // the id is the last element
	}
	for _, tt := range tests {
		t.Run(tt.branch, func(t *testing.T) {
			got, created, ok := branchRunID(tt.branch)
			if got != tt.wantID || ok != (tt.wantID != "") {
				t.Fatalf("branchRunID(%q) = %q, %v; want %q", tt.branch, got, ok, tt.wantID)
			}
			if ok && !created.Equal(at) {
				t.Errorf("created %v, want %v (the id's time)", created, at)
			}
		})
	}
}

func lowerCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
