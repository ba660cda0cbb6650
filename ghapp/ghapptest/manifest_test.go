package ghapptest_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func TestManifestRefusals(t *testing.T) {
	gh := ghapptest.New(t)
	const ok = `"url":"https://k.example","redirect_url":"http://127.0.0.1:1/cb","hook_attributes":{"url":"https://k.example/h"}`
	for _, tc := range []struct{ manifest, want string }{
		{`{`, "not JSON"},
		{`{"redirect_url":"http://127.0.0.1:1/cb"}`, "url must be an absolute URL"},
		{`{"url":"https://k.example"}`, "redirect_url must be"},
		{`{"url":"https://k.example","redirect_url":"http://127.0.0.1:1/cb","hook_attributes":{"active":true}}`, "hook_attributes.url"},
		{`{` + ok + `,"default_permissions":{"checks":"admin"}}`, `default_permissions.checks: "admin"`},
		{`{` + ok + `,"default_permissions":{"chekcs":"write"}}`, `unknown permission "chekcs"`},
		{`{` + ok + `,"default_events":["check_run"]}`, "check_run needs the checks permission"},
		{`{` + ok + `,"default_permissions":{"checks":"write"},"default_events":["merge_group"]}`, "merge_group needs the merge_queues permission"},
		{`{` + ok + `,"default_events":["pull_requests"]}`, `unknown event "pull_requests"`},
	} {
		resp, err := http.PostForm(gh.URL()+"/settings/apps/new", url.Values{"manifest": {tc.manifest}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), tc.want) {
			t.Errorf("manifest %s: %d %s, want 422 saying %q", tc.manifest, resp.StatusCode, body, tc.want)
		}
	}
	if n := len(gh.ManifestPosts()); n != 0 {
		t.Errorf("%d refused manifests recorded, want none", n)
	}
}

func TestManifestConversionNeedsAKnownCode(t *testing.T) {
	gh := ghapptest.New(t)
	resp, err := http.Post(gh.APIURL()+"app-manifests/nosuch/conversions", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown code: %d, want 404", resp.StatusCode)
	}
}
