package ghapp

import "time"

// checkRunBody is the wire form of both requests; go-github's option
// types would send an empty "name" on every update, which GitHub rejects.
type checkRunBody struct {
	Name        string        `json:"name,omitempty"`
	HeadSHA     string        `json:"head_sha,omitempty"`
	Status      string        `json:"status,omitempty"`
	Conclusion  string        `json:"conclusion,omitempty"`
	StartedAt   *time.Time    `json:"started_at,omitempty"`
	CompletedAt *time.Time    `json:"completed_at,omitempty"`
	DetailsURL  string        `json:"details_url,omitempty"`
	ExternalID  string        `json:"external_id,omitempty"`
	Output      *outputBody   `json:"output,omitempty"`
	Actions     *[]actionBody `json:"actions,omitempty"`
}

type actionBody struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Identifier  string `json:"identifier"`
}

type outputBody struct {
	Title       string           `json:"title"`
	Summary     string           `json:"summary"`
	Text        string           `json:"text,omitempty"`
	Annotations []annotationBody `json:"annotations,omitempty"`
}

type annotationBody struct {
	Path        string `json:"path"`
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	StartColumn int    `json:"start_column,omitempty"`
	EndColumn   int    `json:"end_column,omitempty"`
	Level       string `json:"annotation_level"`
	Message     string `json:"message"`
	Title       string `json:"title,omitempty"`
	RawDetails  string `json:"raw_details,omitempty"`
}

func (cr CheckRunCreate) body() *checkRunBody {
	b := CheckRunUpdate{Name: cr.Name, Status: cr.Status, Conclusion: cr.Conclusion,
		StartedAt: cr.StartedAt, CompletedAt: cr.CompletedAt, DetailsURL: cr.DetailsURL,
		ExternalID: cr.ExternalID, Output: cr.Output, Actions: cr.Actions}.body()
	b.HeadSHA = cr.HeadSHA
	if cr.Actions != nil && len(cr.Actions) == 0 {
		b.Actions = nil // nothing to remove on a new run
	}
	return b
}

func (u CheckRunUpdate) body() *checkRunBody {
	b := &checkRunBody{Name: u.Name, Status: u.Status, Conclusion: u.Conclusion,
		StartedAt: timePtr(u.StartedAt), CompletedAt: timePtr(u.CompletedAt),
		DetailsURL: u.DetailsURL, ExternalID: u.ExternalID}
	if u.Actions != nil {
		acts := make([]actionBody, len(u.Actions))
		for i, a := range u.Actions {
			acts[i] = actionBody(a)
		}
		b.Actions = &acts
	}
	if o := u.Output; o != nil {
		b.Output = &outputBody{Title: o.Title, Summary: o.Summary, Text: o.Text}
		for _, a := range o.Annotations {
			b.Output.Annotations = append(b.Output.Annotations, a.body())
		}
	}
	return b
}

func (a Annotation) body() annotationBody {
	ab := annotationBody{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine,
		Level: a.Level, Message: a.Message, Title: a.Title, RawDetails: a.RawDetails}
	// GitHub refuses columns on an annotation spanning lines.
	if a.StartLine == a.EndLine {
		ab.StartColumn, ab.EndColumn = a.StartColumn, a.EndColumn
	}
	return ab
}

// timePtr is nil for the zero time, so it is left out; GitHub wants UTC
// ISO 8601, which time.Time's JSON form is once in UTC.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC().Truncate(time.Second)
	return &u
}
