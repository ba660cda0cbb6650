package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/runner/gc"
)

// TestRetentionOptions: the documented defaults, values and off.
func TestRetentionOptions(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name      string
		in        serverRetention
		want      gc.Retention
		wantEvery time.Duration
	}{
		{name: "defaults", want: gc.Retention{Runs: 14 * day, Branches: 14 * day, Mirrors: 30 * day, Caches: 30 * day}, wantEvery: time.Hour},
		{name: "set", in: serverRetention{Runs: "2d", Branches: "36h", RemoteBranches: "30d", Mirrors: "90d", Caches: "7d", Every: "5m"},
			want: gc.Retention{Runs: 2 * day, Branches: 36 * time.Hour, RemoteBranches: 30 * day, Mirrors: 90 * day, Caches: 7 * day}, wantEvery: 5 * time.Minute},
		{name: "off", in: serverRetention{Runs: "off", Branches: "off", RemoteBranches: "off", Mirrors: "off", Caches: "off"},
			want: gc.Retention{}, wantEvery: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, every, err := tt.in.options(nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" || every != tt.wantEvery {
				t.Errorf("options (-got +want):\n%s\nevery %s, want %s", diff, every, tt.wantEvery)
			}
		})
	}
}

// TestServerPolicyRetention: the cache cap of sandbox.caches.max_bytes
// joins the retention the sweep applies; 10GiB by default, off for none.
func TestServerPolicyRetention(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{{"", 10 << 30}, {"512MiB", 512 << 20}, {"off", 0}} {
		ret, _, err := serverPolicy{Sandbox: sandboxPolicy{Caches: sandboxCaches{MaxBytes: tt.in}}}.retention()
		if err != nil || ret.CacheBytes != tt.want {
			t.Errorf("max_bytes %q: CacheBytes %d, %v; want %d", tt.in, ret.CacheBytes, err, tt.want)
		}
	}
}
