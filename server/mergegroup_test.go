package server

import "testing"

func TestGroupPR(t *testing.T) {
	tests := []struct {
		ref  string
		want int
		ok   bool
	}{
		{"refs/heads/gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64", 104, true},
		{"gh-readonly-queue/main/pr-7-abc", 7, true},
		{"gh-readonly-queue/release/v2/pr-12-abc", 12, true}, // a base with a slash
		{"gh-readonly-queue/main/pr-007-abc", 0, false},
		{"gh-readonly-queue/main/pr-0-abc", 0, false},
		{"gh-readonly-queue/main/pr-12", 0, false},
		{"gh-readonly-queue/main/batch-3", 0, false},
		{"refs/heads/feature/pr-12-abc", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := GroupPR(tt.ref)
		if got != tt.want || ok != tt.ok {
			t.Errorf("GroupPR(%q) = %d, %v; want %d, %v", tt.ref, got, ok, tt.want, tt.ok)
		}
	}
}
