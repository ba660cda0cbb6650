package queue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPick(t *testing.T) {
	a1 := schedGroup{Installation: 1, Repo: "a/one", Oldest: 100}
	a2 := schedGroup{Installation: 1, Repo: "a/two", Oldest: 50}
	b1 := schedGroup{Installation: 2, Repo: "b/one", Oldest: 900}
	c1 := schedGroup{Installation: 3, Repo: "c/one", Oldest: 10}
	tests := []struct {
		name    string
		snap    schedSnapshot
		caps    Caps
		want    schedGroup
		wantNot bool // nothing may start
	}{
		{name: "nothing queued", snap: schedSnapshot{}, wantNot: true},
		{name: "one group", snap: schedSnapshot{Groups: []schedGroup{a1}}, want: a1},
		{
			name: "fewest running wins over oldest run",
			snap: schedSnapshot{Groups: []schedGroup{a1, b1}, BusyInst: map[int64]int{1: 2}},
			want: b1,
		},
		{
			name: "fewest running, even when the other has more queued",
			snap: schedSnapshot{Groups: []schedGroup{a2, a1, b1}, BusyInst: map[int64]int{1: 1, 2: 0}},
			want: b1,
		},
		{
			name: "tie on running: least recently started",
			snap: schedSnapshot{Groups: []schedGroup{a1, b1}, BusyInst: map[int64]int{1: 1, 2: 1},
				LastStarted: map[int64]int64{1: 500, 2: 400}},
			want: b1,
		},
		{
			name: "never started comes before started",
			snap: schedSnapshot{Groups: []schedGroup{a1, b1},
				LastStarted: map[int64]int64{1: 500}},
			want: b1,
		},
		{
			name: "tie on both: oldest run",
			snap: schedSnapshot{Groups: []schedGroup{b1, c1},
				LastStarted: map[int64]int64{2: 5, 3: 5}},
			want: c1,
		},
		{
			name: "within an installation: oldest run across its repositories",
			snap: schedSnapshot{Groups: []schedGroup{a1, a2}},
			want: a2,
		},
		{
			name: "repository at its cap waits; its installation's other repository goes",
			snap: schedSnapshot{Groups: []schedGroup{a1, a2}, BusyRepo: map[string]int{"a/two": 1},
				BusyInst: map[int64]int{1: 1}},
			caps: Caps{PerRepository: 1},
			want: a1,
		},
		{
			name: "installation at its cap waits, even with the oldest run",
			snap: schedSnapshot{Groups: []schedGroup{c1, b1}, BusyInst: map[int64]int{3: 2, 2: 5},
				BusyRepo: map[string]int{"c/one": 2, "b/one": 5}},
			caps:    Caps{PerInstallation: 2},
			wantNot: true,
		},
		{
			name: "installation cap: the other installation goes",
			snap: schedSnapshot{Groups: []schedGroup{c1, b1}, BusyInst: map[int64]int{3: 2, 2: 1},
				BusyRepo: map[string]int{"c/one": 2, "b/one": 1}},
			caps: Caps{PerInstallation: 2},
			want: b1,
		},
		{
			name: "zero caps bound nothing",
			snap: schedSnapshot{Groups: []schedGroup{a1}, BusyInst: map[int64]int{1: 100},
				BusyRepo: map[string]int{"a/one": 100}},
			want: a1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pick(tt.snap, tt.caps)
			if ok == tt.wantNot {
				t.Fatalf("pick ok = %v, want %v (got %+v)", ok, !tt.wantNot, got)
			}
			if diff := cmp.Diff(got, tt.want); !tt.wantNot && diff != "" {
				t.Errorf("pick (-got +want):\n%s", diff)
			}
		})
	}
}

func TestCapReached(t *testing.T) {
	g := schedGroup{Installation: 1, Repo: "octo/widgets"}
	snap := schedSnapshot{BusyInst: map[int64]int{1: 3}, BusyRepo: map[string]int{"octo/widgets": 1}}
	tests := []struct {
		caps Caps
		want string
	}{
		{Caps{}, ""},
		{Caps{PerRepository: 2, PerInstallation: 4}, ""},
		{Caps{PerRepository: 1}, "octo/widgets has 1 run going, this server's limit per repository (limits.max_runs_per_repository)"},
		{Caps{PerInstallation: 3}, "this installation has 3 runs going, this server's limit per installation (limits.max_runs_per_installation)"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(capReached(snap, g, tt.caps), tt.want); diff != "" {
			t.Errorf("capReached(%+v) (-got +want):\n%s", tt.caps, diff)
		}
	}
}
