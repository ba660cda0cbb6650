package ghapptest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/go-github/v92/github"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func annotations(n int, path string) []*github.CheckRunAnnotation {
	out := make([]*github.CheckRunAnnotation, n)
	for i := range out {
		out[i] = &github.CheckRunAnnotation{
			Path: github.Ptr(path), StartLine: github.Ptr(i + 1), EndLine: github.Ptr(i + 1),
			AnnotationLevel: github.Ptr("failure"), Message: github.Ptr(fmt.Sprintf("finding %d", i+1)),
		}
	}
	return out
}

// TestCheckRunRoundTrip creates a check run and completes it with go-github,
// as the bot does, and checks what the fake recorded.
func TestCheckRunRoundTrip(t *testing.T) {
	s, _, sha, tok := setup(t)
	c := client(t, s, tok)
	ctx := t.Context()
	created, _, err := c.Checks.CreateCheckRun(ctx, "acme", "widgets", github.CreateCheckRunOptions{
		Name: "kilroy/ci/vet", HeadSHA: sha, Status: github.Ptr("in_progress"),
		ExternalID: github.Ptr("run1/vet"), DetailsURL: github.Ptr("https://kilroy.example/runs/run1"),
		Output: &github.CheckRunOutput{Title: github.Ptr("vet"), Summary: github.Ptr("running"),
			Annotations: annotations(50, "main.go")},
		Actions: []*github.CheckRunAction{{Label: "Re-run", Description: "Run this pipeline again", Identifier: "rerun"}},
	})
	if err != nil {
		t.Fatalf("CreateCheckRun: %v", err)
	}
	_, _, err = c.Checks.UpdateCheckRun(ctx, "acme", "widgets", created.GetID(), github.UpdateCheckRunOptions{
		Name: "kilroy/ci/vet", Conclusion: github.Ptr("failure"),
		Output: &github.CheckRunOutput{Title: github.Ptr("vet failed"), Summary: github.Ptr("2 more"),
			Text: github.Ptr("log"), Annotations: annotations(2, "README.md")},
	})
	if err != nil {
		t.Fatalf("UpdateCheckRun: %v", err)
	}

	runs := s.CheckRuns("acme", "widgets")
	if len(runs) != 1 {
		t.Fatalf("CheckRuns: %d runs, want 1", len(runs))
	}
	got := runs[0]
	want := &ghapptest.CheckRun{
		ID: created.GetID(), Name: "kilroy/ci/vet", HeadSHA: sha, Status: "completed", Conclusion: "failure",
		ExternalID: "run1/vet", DetailsURL: "https://kilroy.example/runs/run1",
		Title: "vet failed", Summary: "2 more", Text: "log",
		Actions: []ghapptest.Action{{Label: "Re-run", Description: "Run this pipeline again", Identifier: "rerun"}},
	}
	ignore := cmpopts.IgnoreFields(ghapptest.CheckRun{}, "StartedAt", "CompletedAt", "Annotations", "Requests")
	if diff := cmp.Diff(got, want, ignore); diff != "" {
		t.Errorf("check run (-got +want):\n%s", diff)
	}
	if len(got.Annotations) != 52 || got.Annotations[50].Path != "README.md" || got.Annotations[49].StartLine != 50 {
		t.Errorf("annotations: %d, want 50 from the create then 2 from the update", len(got.Annotations))
	}
	if len(got.Requests) != 2 || got.Requests[0].Method != "POST" || got.Requests[1].Method != "PATCH" {
		t.Errorf("requests: %+v, want POST then PATCH", got.Requests)
	}
	if got.CompletedAt.IsZero() {
		t.Error("CompletedAt not set by a conclusion")
	}

	fetched, _, err := c.Checks.GetCheckRun(ctx, "acme", "widgets", created.GetID())
	if err != nil {
		t.Fatalf("GetCheckRun: %v", err)
	}
	if fetched.GetOutput().GetAnnotationsCount() != 52 || fetched.GetStatus() != "completed" {
		t.Errorf("GetCheckRun: %d annotations, status %q; want 52, completed",
			fetched.GetOutput().GetAnnotationsCount(), fetched.GetStatus())
	}
	listed, _, err := c.Checks.ListCheckRunAnnotations(ctx, "acme", "widgets", created.GetID(), &github.ListOptions{PerPage: 100})
	if err != nil || len(listed) != 52 {
		t.Errorf("ListCheckRunAnnotations: %d, %v; want 52", len(listed), err)
	}
	for _, r := range s.Requests() {
		if strings.Contains(fmt.Sprint(r), tok) {
			t.Errorf("request log holds the token: %s %s", r.Method, r.Path)
		}
	}
}

// TestCheckRunInvalidBodies sends bodies GitHub rejects: the fake answers
// 422 and fails the (recorded) test.
func TestCheckRunInvalidBodies(t *testing.T) {
	long := strings.Repeat("x", 65536)
	tests := []struct {
		name   string
		update bool
		body   string // SHA and ANNOTATIONS are replaced
		want   string // in the recorded failure
	}{
		{"51 annotations", false, `{"name":"n","head_sha":"SHA","output":{"title":"t","summary":"s","annotations":[ANNOTATIONS]}}`, "maxItems: got 51, want 50"},
		{"completed without conclusion", false, `{"name":"n","head_sha":"SHA","status":"completed"}`, "conclusion"},
		{"summary too long", true, `{"output":{"title":"t","summary":"` + long + `"}}`, "/output/summary"},
		{"bad annotation level", true, `{"output":{"title":"t","summary":"s","annotations":[{"path":"a","start_line":1,"end_line":1,"annotation_level":"error","message":"m"}]}}`, "annotation_level"},
		{"action label too long", true, `{"actions":[{"label":"a label over twenty chars","description":"d","identifier":"i"}]}`, "/actions/0/label"},
		{"four actions", true, `{"actions":[{"label":"a","description":"d","identifier":"1"},{"label":"a","description":"d","identifier":"2"},{"label":"a","description":"d","identifier":"3"},{"label":"a","description":"d","identifier":"4"}]}`, "maxItems"},
		{"output without summary", true, `{"output":{"title":"t"}}`, "summary"},
	}
	one := `{"path":"a","start_line":1,"end_line":1,"annotation_level":"notice","message":"m"}`
	fifty1 := strings.TrimSuffix(strings.Repeat(one+",", 51), ",")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			s := ghapptest.New(rec)
			repo := s.AddRepo("acme", "widgets")
			sha := repo.Commit(t, "main", map[string]string{"a": "a\n"}, "initial")
			c := client(t, s, installationToken(t, s, "acme", nil))
			created, _, err := c.Checks.CreateCheckRun(t.Context(), "acme", "widgets", github.CreateCheckRunOptions{Name: "n", HeadSHA: sha})
			if err != nil {
				t.Fatalf("CreateCheckRun: %v", err)
			}
			body := strings.NewReplacer("SHA", sha, "ANNOTATIONS", fifty1).Replace(tt.body)
			method, url := "POST", "repos/acme/widgets/check-runs"
			if tt.update {
				method, url = "PATCH", fmt.Sprintf("%s/%d", url, created.GetID())
			}
			req, err := c.NewRequest(t.Context(), method, url, json.RawMessage(body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(req, nil)
			if statusOf(err) != 422 {
				t.Errorf("status: err %v, want 422", err)
			}
			if f := rec.failures(); len(f) != 1 || !strings.Contains(f[0], tt.want) {
				t.Errorf("recorded failures %q, want one mentioning %q", f, tt.want)
			}
			if runs := s.CheckRuns("acme", "widgets"); len(runs[0].Requests) != 1 {
				t.Errorf("rejected request changed the check run: %d requests", len(runs[0].Requests))
			}
		})
	}
}

func TestCheckRunOnUnknownCommit(t *testing.T) {
	s, _, _, tok := setup(t)
	_, _, err := client(t, s, tok).Checks.CreateCheckRun(t.Context(), "acme", "widgets",
		github.CreateCheckRunOptions{Name: "n", HeadSHA: strings.Repeat("0", 40)})
	if statusOf(err) != 422 || !strings.Contains(err.Error(), "No commit found") {
		t.Errorf("err %v, want 422 No commit found", err)
	}
}

func TestListCheckRunsForRef(t *testing.T) {
	s, _, sha, tok := setup(t)
	c := client(t, s, tok)
	for _, name := range []string{"kilroy/ci", "kilroy/ci", "kilroy/ci/vet"} {
		if _, _, err := c.Checks.CreateCheckRun(t.Context(), "acme", "widgets",
			github.CreateCheckRunOptions{Name: name, HeadSHA: sha}); err != nil {
			t.Fatalf("CreateCheckRun: %v", err)
		}
	}
	tests := []struct {
		ref, name, filter string
		want              int
	}{
		{sha, "", "", 2},
		{"main", "kilroy/ci", "", 1},
		{sha, "kilroy/ci", "all", 2},
		{sha, "kilroy/other", "", 0},
	}
	for _, tt := range tests {
		opts := &github.ListCheckRunsOptions{}
		if tt.name != "" {
			opts.CheckName = github.Ptr(tt.name)
		}
		if tt.filter != "" {
			opts.Filter = github.Ptr(tt.filter)
		}
		res, _, err := c.Checks.ListCheckRunsForRef(t.Context(), "acme", "widgets", tt.ref, opts)
		if err != nil {
			t.Fatalf("ListCheckRunsForRef(%s, %q, %q): %v", tt.ref, tt.name, tt.filter, err)
		}
		if res.GetTotal() != tt.want || len(res.CheckRuns) != tt.want {
			t.Errorf("ListCheckRunsForRef(%s, %q, %q) = %d runs, want %d", tt.ref, tt.name, tt.filter, res.GetTotal(), tt.want)
		}
	}
}
