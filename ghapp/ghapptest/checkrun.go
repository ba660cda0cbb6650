package ghapptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// CheckRun is a check run as the fake holds it: its current fields, every
// annotation the bot appended across requests, and the requests themselves.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string // queued, in_progress, completed
	Conclusion  string
	ExternalID  string
	DetailsURL  string
	StartedAt   time.Time
	CompletedAt time.Time
	Title       string
	Summary     string
	Text        string
	Annotations []Annotation // accumulated: GitHub appends each request's
	Actions     []Action
	Requests    []CheckRunRequest // every accepted POST and PATCH, in order
}

// Annotation is one check-run annotation, in GitHub's JSON field names.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	StartColumn     int    `json:"start_column,omitempty"`
	EndColumn       int    `json:"end_column,omitempty"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title,omitempty"`
	RawDetails      string `json:"raw_details,omitempty"`
}

// Action is a requested-action button.
type Action struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Identifier  string `json:"identifier"`
}

// CheckRunRequest is one request that changed a check run.
type CheckRunRequest struct {
	Method string // POST or PATCH
	Body   string
	At     time.Time // when the fake received it
	// Status, Title and Summary are the body's, decoded; "" where it has
	// none.
	Status, Title, Summary string
}

// request records body, decoded as b, as received at at.
func request(method string, body []byte, b *checkRunBody, at time.Time) CheckRunRequest {
	req := CheckRunRequest{Method: method, Body: string(body), At: at}
	if b.Status != nil {
		req.Status = *b.Status
	}
	if b.Output != nil {
		req.Title, req.Summary = b.Output.Title, b.Output.Summary
	}
	return req
}

// Patches are cr's accepted PATCH requests, in order: the updates of a
// check run that live progress and completion make.
func (cr *CheckRun) Patches() []CheckRunRequest {
	var out []CheckRunRequest
	for _, r := range cr.Requests {
		if r.Method == http.MethodPatch {
			out = append(out, r)
		}
	}
	return out
}

// clone copies cr deeply enough that the caller may keep it while the bot
// goes on updating the original.
func (cr *CheckRun) clone() *CheckRun {
	c := *cr
	c.Annotations = slices.Clone(cr.Annotations)
	c.Actions = slices.Clone(cr.Actions)
	c.Requests = slices.Clone(cr.Requests)
	return &c
}

// checkRunBody is a create or update request; pointers tell "absent" from
// "empty", since an update changes only what it names.
type checkRunBody struct {
	Name        *string    `json:"name"`
	HeadSHA     string     `json:"head_sha"`
	DetailsURL  *string    `json:"details_url"`
	ExternalID  *string    `json:"external_id"`
	Status      *string    `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Output      *checkOut  `json:"output"`
	Actions     *[]Action  `json:"actions"`
}

type checkOut struct {
	Title       string       `json:"title"`
	Summary     string       `json:"summary"`
	Text        *string      `json:"text"`
	Annotations []Annotation `json:"annotations"`
}

// apply changes cr the way GitHub does: named fields replace, annotations
// append, a conclusion completes the run.
func (cr *CheckRun) apply(b *checkRunBody, now time.Time) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&cr.Name, b.Name)
	set(&cr.DetailsURL, b.DetailsURL)
	set(&cr.ExternalID, b.ExternalID)
	set(&cr.Status, b.Status)
	if b.Conclusion != nil {
		cr.Conclusion, cr.Status = *b.Conclusion, "completed"
	}
	if b.StartedAt != nil {
		cr.StartedAt = *b.StartedAt
	}
	if b.CompletedAt != nil {
		cr.CompletedAt = *b.CompletedAt
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = now
	}
	if o := b.Output; o != nil {
		cr.Title, cr.Summary = o.Title, o.Summary
		set(&cr.Text, o.Text)
		cr.Annotations = append(cr.Annotations, o.Annotations...)
	}
	if b.Actions != nil {
		cr.Actions = slices.Clone(*b.Actions)
	}
}

func decodeCheckRunBody(body []byte) (*checkRunBody, error) {
	var b checkRunBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("decode check-run body: %w", err)
	}
	return &b, nil
}

func (s *Server) checkRunJSONLocked(rs *repoState, cr *CheckRun) map[string]any {
	url := fmt.Sprintf("%srepos/%s/check-runs/%d", s.APIURL(), rs.fullName(), cr.ID)
	return map[string]any{
		"id":           cr.ID,
		"node_id":      fmt.Sprintf("CR_%d", cr.ID),
		"name":         cr.Name,
		"head_sha":     cr.HeadSHA,
		"external_id":  cr.ExternalID,
		"url":          url,
		"html_url":     fmt.Sprintf("%s/%s/runs/%d", s.URL(), rs.fullName(), cr.ID),
		"details_url":  cr.DetailsURL,
		"status":       cr.Status,
		"conclusion":   nullable(cr.Conclusion),
		"started_at":   timeJSON(cr.StartedAt),
		"completed_at": timeJSON(cr.CompletedAt),
		"output": map[string]any{
			"title":             nullable(cr.Title),
			"summary":           nullable(cr.Summary),
			"text":              nullable(cr.Text),
			"annotations_count": len(cr.Annotations),
			"annotations_url":   url + "/annotations",
		},
		"check_suite":   map[string]any{"id": rs.id*1000 + 1},
		"app":           map[string]any{"id": s.cfg.appID, "slug": s.cfg.appSlug, "name": s.cfg.appSlug},
		"pull_requests": s.checkRunPullsLocked(rs, cr.HeadSHA),
	}
}

// checkRunPullsLocked lists the open pull requests whose head is sha in the
// same repository. Like GitHub, it leaves out pull requests from forks:
// the bot must keep its own mapping for those.
func (s *Server) checkRunPullsLocked(rs *repoState, sha string) []map[string]any {
	out := []map[string]any{}
	for _, p := range sortedPulls(rs) {
		if p.HeadSHA != sha || !strings.EqualFold(p.HeadRepo, rs.fullName()) {
			continue
		}
		repo := map[string]any{"id": rs.id, "name": rs.name, "url": s.APIURL() + "repos/" + rs.fullName()}
		out = append(out, map[string]any{
			"id":     rs.id*100000 + int64(p.Number),
			"number": p.Number,
			"url":    fmt.Sprintf("%srepos/%s/pulls/%d", s.APIURL(), rs.fullName(), p.Number),
			"head":   map[string]any{"ref": p.HeadRef, "sha": p.HeadSHA, "repo": repo},
			"base":   map[string]any{"ref": p.BaseRef, "sha": "", "repo": repo},
		})
	}
	return out
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func timeJSON(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}
