package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// allFields lets cmp read the unexported payload types.
var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

// TestScanPullRequest: on real pull_request payloads the gjson scan takes
// the fast path and gives what encoding/json gives.
func TestScanPullRequest(t *testing.T) {
	payloads := map[string][]byte{
		"pull_request.opened.json": fixture(t, "pull_request.opened.json"),
		"pull_request.fork.json":   fixture(t, "pull_request.fork.json"),
	}
	if dir, err := findSharedWebhooks(); err == nil {
		names, _ := filepath.Glob(filepath.Join(dir, "pull_request", "*.payload.json"))
		for _, name := range names {
			body, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			payloads[filepath.Base(name)] = body
		}
	}
	for name, body := range payloads {
		t.Run(name, func(t *testing.T) {
			var got, want pullRequestPayload
			if !scanPullRequest(body, &got) {
				t.Fatal("scan declined a real payload")
			}
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, want, allFields); diff != "" {
				t.Errorf("scan vs encoding/json (-got +want):\n%s", diff)
			}
		})
	}
}

// TestScanDeclines: what encoding/json would read differently, or reject,
// sends the scan back to encoding/json.
func TestScanDeclines(t *testing.T) {
	for _, payload := range []string{
		`{"action": "opened", `,
		`{"action": "opened", "pull_request": {"number": "seven"}}`,
		`{"action": "opened", "pull_request": {"number": 7.5}}`,
		`{"action": "opened", "pull_request": {"number": 7e1}}`,
		`{"Action": "opened"}`,
		`{"action": "opened", "action": "closed"}`,
		`{"action": "open\u0065d"}`,
		`{"action": "opened", "pull_request": {"head": {"repo": []}}}`,
		`{"action": "opened", "pull_request": {"draft": "yes"}}`,
		`{"action": "opened", "sender": {"login": 5}}`,
		"{\"action\": \"op\xffened\"}",
		`[]`,
	} {
		var p pullRequestPayload
		if scanPullRequest([]byte(payload), &p) {
			t.Errorf("scan took %s", payload)
		}
	}
}

// FuzzScanPullRequest: whenever the scan takes a payload, encoding/json
// takes it too and decodes the same.
func FuzzScanPullRequest(f *testing.F) {
	f.Add(fixture(f, "pull_request.opened.json"))
	f.Add(fixture(f, "pull_request.fork.json"))
	f.Add([]byte(`{"action":"opened","pull_request":{"number":1,"head":{"repo":null}},"repository":null}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var got, want pullRequestPayload
		if !scanPullRequest(payload, &got) {
			return
		}
		if err := json.Unmarshal(payload, &want); err != nil {
			t.Fatalf("scan took a payload encoding/json rejects: %v", err)
		}
		if diff := cmp.Diff(got, want, allFields); diff != "" {
			t.Errorf("scan vs encoding/json (-got +want):\n%s", diff)
		}
	})
}
