package ghapp

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func TestCheckRunRoundTrip(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	started := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id, err := c.CreateCheckRun(t.Context(), f.r, CheckRunCreate{
		Name: "kilroy/ci", HeadSHA: f.sha, Status: "in_progress", StartedAt: started,
		DetailsURL: "https://kilroy.example/runs/r1", ExternalID: "r1/ci",
		Output: &CheckRunOutput{Title: "Running", Summary: "1 of 3 nodes", Annotations: []Annotation{
			{Path: "main.go", StartLine: 3, EndLine: 3, StartColumn: 2, EndColumn: 5, Level: "failure", Message: "boom"},
		}},
		Actions: []CheckRunAction{{Label: "Cancel", Description: "Cancel this run", Identifier: "cancel"}},
	})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}
	err = c.UpdateCheckRun(t.Context(), f.r, id, CheckRunUpdate{
		Conclusion: "failure", Status: "completed", CompletedAt: started.Add(time.Minute),
		Output: &CheckRunOutput{Title: "Failed", Summary: "verify failed", Text: "log tail", Annotations: []Annotation{
			// Columns on a multi-line annotation are dropped: GitHub refuses them.
			{Path: "lib/a.go", StartLine: 1, EndLine: 4, StartColumn: 1, EndColumn: 9, Level: "warning", Message: "long", Title: "vet"},
		}},
		Actions: []CheckRunAction{{Label: "Re-run", Description: "Run again", Identifier: "rerun"}},
	})
	if err != nil {
		t.Fatalf("UpdateCheckRun: %v", err)
	}

	runs := f.srv.CheckRuns("acme", "widgets")
	if len(runs) != 1 {
		t.Fatalf("fake holds %d check runs, want 1", len(runs))
	}
	got := runs[0]
	got.Requests = nil
	want := &ghapptest.CheckRun{
		ID: id, Name: "kilroy/ci", HeadSHA: f.sha, Status: "completed", Conclusion: "failure",
		ExternalID: "r1/ci", DetailsURL: "https://kilroy.example/runs/r1",
		StartedAt: started, CompletedAt: started.Add(time.Minute),
		Title: "Failed", Summary: "verify failed", Text: "log tail",
		Annotations: []ghapptest.Annotation{
			{Path: "main.go", StartLine: 3, EndLine: 3, StartColumn: 2, EndColumn: 5, AnnotationLevel: "failure", Message: "boom"},
			{Path: "lib/a.go", StartLine: 1, EndLine: 4, AnnotationLevel: "warning", Message: "long", Title: "vet"},
		},
		Actions: []ghapptest.Action{{Label: "Re-run", Description: "Run again", Identifier: "rerun"}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("check run (-got +want):\n%s", diff)
	}

	list, err := c.ListCheckRunsForRef(t.Context(), f.r, f.sha, "kilroy/ci")
	if err != nil {
		t.Fatalf("ListCheckRunsForRef: %v", err)
	}
	wantList := []CheckRun{{ID: id, Name: "kilroy/ci", HeadSHA: f.sha, Status: "completed", Conclusion: "failure",
		ExternalID: "r1/ci", DetailsURL: "https://kilroy.example/runs/r1", StartedAt: started, CompletedAt: started.Add(time.Minute)}}
	if diff := cmp.Diff(list, wantList); diff != "" {
		t.Errorf("ListCheckRunsForRef (-got +want):\n%s", diff)
	}
}

func TestUpdateCheckRunRetries502(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	id, err := c.CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha, ExternalID: "r1/ci"})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}
	f.srv.FailNext("PATCH", "/api/v3/repos/*/*/check-runs/*", 2, http.StatusBadGateway, nil)
	if err := c.UpdateCheckRun(t.Context(), f.r, id, CheckRunUpdate{Status: "in_progress"}); err != nil {
		t.Fatalf("UpdateCheckRun through two 502s: %v", err)
	}
	if diff := cmp.Diff(statuses(f.requests("PATCH", "")), []int{502, 502, 200}); diff != "" {
		t.Errorf("PATCH statuses (-got +want):\n%s", diff)
	}
	sleeps := f.clock.Sleeps()
	if len(sleeps) != 2 || sleeps[0] <= 0 || sleeps[1] <= 0 {
		t.Errorf("backoff sleeps = %v, want two positive waits", sleeps)
	}
	if got := f.srv.CheckRuns("acme", "widgets")[0].Status; got != "in_progress" {
		t.Errorf("status = %q, want in_progress", got)
	}
}

func TestUpdateCheckRunGivesUpAfterMaxAttempts(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	id, err := c.CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}
	f.srv.FailNext("PATCH", "/api/v3/repos/*/*/check-runs/*", 10, http.StatusServiceUnavailable, nil)
	err = c.UpdateCheckRun(t.Context(), f.r, id, CheckRunUpdate{Status: "in_progress"})
	if err == nil || !strings.Contains(err.Error(), "update check run") || !strings.Contains(err.Error(), "acme/widgets") {
		t.Errorf("error = %v, want the operation and repository named", err)
	}
	if n := len(f.requests("PATCH", "")); n != defaultMaxAttempts {
		t.Errorf("sent %d PATCHes, want %d", n, defaultMaxAttempts)
	}
}

func TestCreateCheckRunRetriesWhenNothingWasCreated(t *testing.T) {
	f := newFixture(t, nil)
	c := f.client(t)
	// The fault fires before the fake handles the POST: nothing exists.
	f.srv.FailNext("POST", "/api/v3/repos/*/*/check-runs", 1, http.StatusBadGateway, nil)
	id, err := c.CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha, ExternalID: "r1/ci"})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}
	runs := f.srv.CheckRuns("acme", "widgets")
	if len(runs) != 1 || runs[0].ID != id {
		t.Errorf("fake holds %d runs (want 1 with id %d)", len(runs), id)
	}
	if n := len(f.requests("GET", "/commits/"+f.sha+"/check-runs")); n != 1 {
		t.Errorf("looked for an existing run %d times, want 1", n)
	}
}

// failAfter lets the first matching request reach the server and then
// answers 502, as when GitHub's front end times out on a request its
// backend completed.
func failAfter(method, suffix string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		var once sync.Once
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err != nil || req.Method != method || !strings.HasSuffix(req.URL.Path, suffix) {
				return resp, err
			}
			fail := false
			once.Do(func() { fail = true })
			if !fail {
				return resp, nil
			}
			discard(resp)
			return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway",
				Header:  http.Header{"Content-Type": {"application/json"}},
				Body:    io.NopCloser(strings.NewReader(`{"message":"Server Error"}`)),
				Request: req}, nil
		})
	}
}

func TestCreateCheckRunDoesNotDuplicateAfterAmbiguous502(t *testing.T) {
	f := newFixture(t, failAfter("POST", "/check-runs"))
	c := f.client(t)
	id, err := c.CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha, ExternalID: "r1/ci"})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}
	runs := f.srv.CheckRuns("acme", "widgets")
	if len(runs) != 1 {
		t.Fatalf("fake holds %d check runs, want 1 (no duplicate)", len(runs))
	}
	if id != runs[0].ID {
		t.Errorf("id = %d, want the run the failed POST made (%d)", id, runs[0].ID)
	}
	if n := len(f.requests("POST", "/check-runs")); n != 1 {
		t.Errorf("sent %d POSTs, want 1", n)
	}
}

func TestCreateCheckRunWithoutExternalIDIsNotRepeated(t *testing.T) {
	f := newFixture(t, failAfter("POST", "/check-runs"))
	_, err := f.client(t).CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: f.sha})
	if err == nil {
		t.Fatal("CreateCheckRun succeeded, want the 502")
	}
	if n := len(f.srv.CheckRuns("acme", "widgets")); n != 1 {
		t.Errorf("fake holds %d check runs, want 1 (the one the 502 hid)", n)
	}
}

func TestCreateCheckRunInvalidIsNotRetried(t *testing.T) {
	f := newFixture(t, nil)
	_, err := f.client(t).CreateCheckRun(t.Context(), f.r, CheckRunCreate{Name: "kilroy/ci", HeadSHA: strings.Repeat("0", 40), ExternalID: "x"})
	if err == nil {
		t.Fatal("CreateCheckRun on an unknown commit succeeded")
	}
	if n := len(f.requests("POST", "/check-runs")); n != 1 {
		t.Errorf("sent %d POSTs for a 422, want 1", n)
	}
}
