package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/queue"
)

// TestRunCapsDefaults: without the settings one installation may hold all
// workers but one and one repository half of them; 0 is no bound, and a
// value given is used as is.
func TestRunCapsDefaults(t *testing.T) {
	tests := []struct {
		policy  string
		workers int
		want    queue.Caps
	}{
		{"", 1, queue.Caps{PerInstallation: 1, PerRepository: 1}},
		{"", 2, queue.Caps{PerInstallation: 1, PerRepository: 1}},
		{"", 3, queue.Caps{PerInstallation: 2, PerRepository: 2}},
		{"", 8, queue.Caps{PerInstallation: 7, PerRepository: 4}},
		{"limits: {max_runs_per_installation: 0, max_runs_per_repository: 0}\n", 2, queue.Caps{}},
		{"limits: {max_runs_per_repository: 3}\n", 8, queue.Caps{PerInstallation: 7, PerRepository: 3}},
	}
	for _, tt := range tests {
		var p serverPolicy
		if err := decodePolicy("policy.yml", []byte(tt.policy), &p); err != nil {
			t.Fatalf("%q: %v", tt.policy, err)
		}
		if diff := cmp.Diff(p.Limits.runCaps(tt.workers), tt.want); diff != "" {
			t.Errorf("%q with %d workers (-got +want):\n%s", tt.policy, tt.workers, diff)
		}
	}
}
