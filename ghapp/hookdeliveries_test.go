package ghapp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func TestHookDeliveriesPagesBackToSince(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	tests := []struct {
		name      string
		recorded  int           // attempts, one a minute, the newest now
		since     time.Duration // before now
		wantN     int
		wantPages int
	}{
		{name: "none", recorded: 0, since: time.Hour, wantN: 0, wantPages: 1},
		{name: "one page", recorded: 40, since: time.Hour, wantN: 40, wantPages: 1},
		{name: "three pages", recorded: 250, since: 5 * time.Hour, wantN: 250, wantPages: 3},
		{name: "stops at since", recorded: 250, since: 119*time.Minute + 30*time.Second, wantN: 120, wantPages: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			for i := tt.recorded - 1; i >= 0; i-- {
				f.srv.RecordDelivery(ghapptest.HookDelivery{GUID: fmt.Sprintf("g-%d", i), Event: "pull_request",
					StatusCode: 202, DeliveredAt: now.Add(-time.Duration(i) * time.Minute)})
			}
			got, err := f.app.HookDeliveries(t.Context(), now.Add(-tt.since))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.wantN {
				t.Fatalf("got %d deliveries, want %d", len(got), tt.wantN)
			}
			for i, d := range got {
				if want := fmt.Sprintf("g-%d", i); d.GUID != want || d.StatusCode != 202 || d.Event != "pull_request" {
					t.Fatalf("delivery %d = %+v, want GUID %s, 202, pull_request (newest first)", i, d, want)
				}
			}
			if n := len(f.requests("GET", "/app/hook/deliveries")); n != tt.wantPages {
				t.Errorf("%d list requests, want %d", n, tt.wantPages)
			}
		})
	}
}

func TestRedeliverHookSendsTheDeliveryAgain(t *testing.T) {
	f := newFixture(t, nil)
	secret := []byte("hook-secret")
	type got struct{ GUID, Event, Signature, Body string }
	var mu sync.Mutex
	var received []got
	bot := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, got{r.Header.Get("X-GitHub-Delivery"), r.Header.Get("X-GitHub-Event"),
			r.Header.Get("X-Hub-Signature-256"), string(b)})
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(bot.Close)
	f.srv.SetWebhook(bot.URL, secret)
	body := `{"action":"opened"}`
	id := f.srv.RecordDelivery(ghapptest.HookDelivery{GUID: "g-1", Event: "pull_request", StatusCode: 503, Body: []byte(body)})

	if err := f.app.RedeliverHook(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	want := []got{{"g-1", "pull_request", ghapptest.Signature256(secret, []byte(body)), body}}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(received, want); diff != "" {
		t.Errorf("bot received (-got +want):\n%s", diff)
	}
	all := f.srv.HookDeliveries()
	if last := all[len(all)-1]; len(all) != 2 || last.GUID != "g-1" || !last.Redelivery || last.StatusCode != 202 {
		t.Errorf("attempts = %+v, want the 503 then a 202 redelivery of g-1", all)
	}
	if err := f.app.RedeliverHook(t.Context(), 1); err == nil {
		t.Error("redelivering an unknown attempt succeeded")
	}
}
