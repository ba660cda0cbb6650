package checks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// restSchemas compiles the check-run request schemas from the shared test
// data next to the repository, skipping when that checkout is absent.
func restSchemas(t *testing.T) (create, update *jsonschema.Schema) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "..", "shared", "testdata", "github", "rest")
	if _, err := os.Stat(filepath.Join(dir, "checks-create.request.schema.json")); err != nil {
		t.Skipf("check-run schemas not found in ../shared/testdata/github/rest next to the module root (%v); check out the shared test data to run this test", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	create, err = c.Compile(filepath.Join(dir, "checks-create.request.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	update, err = c.Compile(filepath.Join(dir, "checks-update.request.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	return create, update
}

// moduleRoot is the nearest directory at or above the working directory
// holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

type output struct {
	Title       string       `json:"title"`
	Summary     string       `json:"summary"`
	Text        string       `json:"text,omitempty"`
	Annotations []Annotation `json:"annotations,omitempty"`
}

type checkBody struct {
	Name       string  `json:"name,omitempty"`
	HeadSHA    string  `json:"head_sha,omitempty"`
	DetailsURL string  `json:"details_url,omitempty"`
	ExternalID string  `json:"external_id,omitempty"`
	Status     string  `json:"status,omitempty"`
	Conclusion string  `json:"conclusion,omitempty"`
	Output     *output `json:"output,omitempty"`
}

func validate(t *testing.T, sch *jsonschema.Schema, body checkBody) error {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(v)
}

// verifyBodies are the create request of a verify check and the updates
// that append the rest of its annotations.
func verifyBodies(v *RunView, rep VerifyReport, opts RenderOptions) (checkBody, []checkBody) {
	batches := Batches(rep.Annotations, AnnotationsPerRequest)
	out := &output{Title: rep.Title, Summary: rep.Summary, Text: rep.Text}
	if len(batches) > 0 {
		out.Annotations = batches[0]
	}
	create := checkBody{Name: rep.Name, HeadSHA: v.HeadSHA, DetailsURL: opts.RunURL, ExternalID: rep.ExternalID,
		Status: rep.Status, Conclusion: rep.Conclusion, Output: out}
	var updates []checkBody
	for _, b := range batches[min(1, len(batches)):] {
		updates = append(updates, checkBody{Output: &output{Title: rep.Title, Summary: rep.Summary, Annotations: b}})
	}
	return create, updates
}

func TestBodiesMatchSchema(t *testing.T) {
	create, update := restSchemas(t)
	opts := withTail(githubOpts(), func(string, string) string { return bigLog(300 << 10) })

	t.Run("summary", func(t *testing.T) {
		v := failedRun(t)
		title, summary, text := Summary(v, opts)
		status, conclusion := RunConclusion(v)
		body := checkBody{Name: "kilroy/" + v.Pipeline, HeadSHA: v.HeadSHA, DetailsURL: opts.RunURL, ExternalID: v.RunID,
			Status: status, Conclusion: conclusion, Output: &output{Title: title, Summary: summary, Text: text}}
		if err := validate(t, create, body); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		name string
		v    *RunView
	}{
		{"many findings", verifyView(attractor.KindVerify, attractor.Outcome{Status: attractor.StatusFail, Findings: manyFindings(180)})},
		{"artifacts", verifyView(attractor.KindVerifyArtifacts, artifactsOutcome([]string{"**/node_modules/**", "**/__pycache__/**"}))},
		{"vet", failedRun(t)},
		{"kind unknown", verifyView("", attractor.Outcome{Status: attractor.StatusFail, Findings: manyFindings(3)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.HeadSHA = sha(1)
			node := tc.v.FailedNode
			c, ups := verifyBodies(tc.v, VerifyCheck(tc.v, node, opts), opts)
			if err := validate(t, create, c); err != nil {
				t.Errorf("create: %v", err)
			}
			for i, u := range ups {
				if err := validate(t, update, u); err != nil {
					t.Errorf("update %d: %v", i, err)
				}
			}
		})
	}
	// The schema does reject what Batches prevents, so the checks above
	// can fail.
	t.Run("control", func(t *testing.T) {
		rep := VerifyCheck(verifyView(attractor.KindVerify, attractor.Outcome{Status: attractor.StatusFail, Findings: manyFindings(51)}), "lint", opts)
		c, _ := verifyBodies(&RunView{HeadSHA: sha(1)}, rep, opts)
		c.Output.Annotations = rep.Annotations
		if err := validate(t, create, c); err == nil {
			t.Error("a create body with 51 annotations passed the schema")
		}
	})
}
