package main

import (
	"net/http"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestServeE2ERedeliversMissedDeliveries: a pull request opened while the
// bot was down, and one it answered 503, run once it is back: its recovery
// pass at start asks GitHub to deliver them again. A delivery it took is
// not asked for.
func TestServeE2ERedeliversMissedDeliveries(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	took := e.repo.Commit(t, "feature-3", map[string]string{"README.md": "three\n"}, "three")
	if code := e.gh.Deliver("pull_request", "took-3", e.openPR("opened", pr{number: 3, sha: took})); code != http.StatusAccepted {
		t.Fatalf("delivery to the running bot = %d, want 202", code)
	}
	e.waitSettled(took, "kilroy/ci")
	e.waitIdle()
	e.stop()

	down := e.repo.Commit(t, "feature-1", map[string]string{"README.md": "one\n"}, "one")
	if code := e.gh.Deliver("pull_request", "down-1", e.openPR("opened", pr{number: 1, sha: down})); code != 0 {
		t.Fatalf("delivery to the stopped bot = %d, want 0 (not delivered)", code)
	}
	refused := e.repo.Commit(t, "feature-2", map[string]string{"README.md": "two\n"}, "two")
	e.gh.RecordDelivery(ghapptest.HookDelivery{GUID: "refused-2", Event: "pull_request", StatusCode: http.StatusServiceUnavailable,
		Body: e.openPR("opened", pr{number: 2, sha: refused})})

	e.start()
	e.waitSettled(down, "kilroy/ci", "kilroy/ci/vet")
	e.waitSettled(refused, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	assertRedelivered(t, e.gh.HookDeliveries(), map[string]int{"down-1": 1, "refused-2": 1, "took-3": 0})
	if n := len(e.named(took, "kilroy/ci")); n != 1 {
		t.Errorf("%d kilroy/ci runs on the head delivered before, want 1", n)
	}
}

// TestServeE2ERedeliversPeriodically: a delivery answered 503 while the
// bot runs is asked for again by the next periodic pass (redelivery.every).
func TestServeE2ERedeliversPeriodically(t *testing.T) {
	e := newE2E(t, e2eOptions{policy: "redelivery:\n  every: 1s\n"})
	sha := e.repo.Commit(t, "feature-4", map[string]string{"README.md": "four\n"}, "four")
	e.gh.RecordDelivery(ghapptest.HookDelivery{GUID: "refused-4", Event: "pull_request", StatusCode: http.StatusBadGateway,
		Body: e.openPR("opened", pr{number: 4, sha: sha})})
	e.waitSettled(sha, "kilroy/ci", "kilroy/ci/vet")
	e.waitIdle()
	assertRedelivered(t, e.gh.HookDeliveries(), map[string]int{"refused-4": 1})
}

// assertRedelivered checks how many redeliveries each GUID got, each
// answered 202.
func assertRedelivered(t *testing.T, attempts []ghapptest.HookDelivery, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, d := range attempts {
		if !d.Redelivery {
			continue
		}
		got[d.GUID]++
		if d.StatusCode != http.StatusAccepted {
			t.Errorf("redelivery of %s answered %d, want 202", d.GUID, d.StatusCode)
		}
	}
	for guid, n := range want {
		if got[guid] != n {
			t.Errorf("%s redelivered %d times, want %d (attempts: %+v)", guid, got[guid], n, attempts)
		}
	}
}
