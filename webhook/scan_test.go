package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// allFields lets cmp read the unexported payload types.
var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

// TestScanPullRequest: on real pull_request payloads the scan takes the
// fast path and gives what encoding/json gives.
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

// TestScanKnowsEveryField: the scan reads every field of the payload
// structs, so a field added to one must be added to its key list too, or
// the scan would leave it empty where encoding/json fills it.
func TestScanKnowsEveryField(t *testing.T) {
	for typ, keys := range map[reflect.Type][]string{
		reflect.TypeFor[pullRequestPayload](): pullRequestKeys,
		reflect.TypeFor[ghPull]():             pullKeys,
		reflect.TypeFor[ghBranch]():           branchKeys,
		reflect.TypeFor[ghRepo]():             repoKeys,
		reflect.TypeFor[ghUser]():             userKeys,
		reflect.TypeFor[ghInstallation]():     installationKeys,
	} {
		if diff := cmp.Diff(keys, jsonNames(typ)); diff != "" {
			t.Errorf("%v: scan keys vs JSON fields (-scan +fields):\n%s", typ, diff)
		}
	}
}

// jsonNames are the JSON names of a struct's fields, embedded ones included.
func jsonNames(typ reflect.Type) []string {
	var names []string
	for f := range typ.Fields() {
		if f.Anonymous {
			names = append(names, jsonNames(f.Type)...)
			continue
		}
		names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	return names
}

// scanCases are payloads the scan must take (and read as encoding/json
// does) or decline, each with the reason.
var scanCases = []struct {
	name    string
	payload string
	take    bool
}{
	{"empty", ``, false},
	{"whitespace only", " \n", false},
	{"top-level null", `null`, true},
	{"top-level null, spaced", " \t\r\nnull\n", true},
	{"top-level array", `[]`, false},
	{"top-level string", `"opened"`, false},
	{"BOM", "\xef\xbb\xbf{\"action\":\"opened\"}", false},
	{"trailing whitespace", "{\"action\":\"opened\"} \t\r\n", true},
	{"trailing garbage", `{"action":"opened"} x`, false},
	{"trailing value", `{"action":"opened"}{}`, false},
	{"trailing brace", `{"action":"opened"}}`, false},
	{"trailing NUL", "{\"action\":\"opened\"}\x00", false},
	{"vertical tab is not whitespace", "{\"action\":\v\"opened\"}", false},
	{"unterminated", `{"action":"opened"`, false},
	{"trailing comma", `{"action":"opened",}`, false},

	{"all escapes in a skipped string", `{"title":"\"\\\/\b\f\n\r\t\u00e9\uD83D\ude00\u0000","action":"opened"}`, true},
	{"invalid escape \\x", `{"title":"\x41","action":"opened"}`, false},
	{"invalid escape \\'", `{"title":"\'","action":"opened"}`, false},
	{"short \\u", `{"title":"\u12","action":"opened"}`, false},
	{"non-hex \\u", `{"title":"\u12g4","action":"opened"}`, false},
	{"control byte in a skipped string", "{\"title\":\"a\x01b\",\"action\":\"opened\"}", false},
	{"newline in a skipped string", "{\"title\":\"a\nb\",\"action\":\"opened\"}", false},
	{"DEL in a skipped string", "{\"title\":\"a\x7fb\",\"action\":\"opened\"}", true},
	{"invalid UTF-8 in a skipped string", "{\"title\":\"a\xffb\",\"action\":\"opened\"}", true},
	{"invalid UTF-8 in a skipped key", "{\"a\xffb\":1,\"action\":\"opened\"}", true},
	{"escape in a kept string", `{"action":"open\u0065d"}`, false},
	{"invalid UTF-8 in a kept string", "{\"action\":\"op\xffened\"}", false},
	{"non-ASCII in a kept string", `{"action":"opened","sender":{"login":"zoé"}}`, true},

	{"-0 skipped", `{"n":-0,"action":"opened"}`, true},
	{"-0 kept", `{"pull_request":{"number":-0}}`, true},
	{"1e5 skipped", `{"n":1e5,"action":"opened"}`, true},
	{"1e5 kept", `{"pull_request":{"number":1e5}}`, false},
	{"fraction kept", `{"pull_request":{"number":7.0}}`, false},
	{"01", `{"n":01,"action":"opened"}`, false},
	{"1.", `{"n":1.,"action":"opened"}`, false},
	{".5", `{"n":.5,"action":"opened"}`, false},
	{"+1", `{"n":+1,"action":"opened"}`, false},
	{"bare minus", `{"n":-,"action":"opened"}`, false},
	{"huge integer skipped", `{"n":123456789012345678901234567890,"action":"opened"}`, true},
	{"huge exponent skipped", `{"n":1e400,"action":"opened"}`, true},
	{"max int64 kept", `{"repository":{"id":9223372036854775807}}`, true},
	{"min int64 kept", `{"repository":{"id":-9223372036854775808}}`, true},
	{"int64 overflow kept", `{"repository":{"id":9223372036854775808}}`, false},
	{"int64 underflow kept", `{"repository":{"id":-9223372036854775809}}`, false},
	{"number as string", `{"repository":{"id":"5"}}`, false},

	{"duplicate keys in a skipped object", `{"labels":{"a":1,"a":2},"action":"opened"}`, true},
	{"duplicate unknown keys in a kept object", `{"x":1,"x":2,"action":"opened"}`, true},
	{"duplicate kept key", `{"action":"opened","action":"closed"}`, false},
	{"duplicate kept object", `{"sender":{"id":1},"sender":{"login":"a"}}`, false},
	{"key differing in case", `{"Action":"opened"}`, false},
	{"key with an escape", `{"act\u0069on":"opened"}`, false},
	{"unknown key with an escape in a kept object", `{"ti\u0074le":"x","action":"opened"}`, false},
	{"key with an escape in a skipped object", `{"labels":{"n\u0061me":"bug"},"action":"opened"}`, true},
	{"long s folds to s", "{\"\u017fender\":{\"id\":1}}", false},
	{"long s folds to s, deeper", "{\"pull_request\":{\"head\":{\"\u017fha\":\"abc\"}}}", false},
	{"non-ASCII key that folds to none of ours", `{"zoé":1,"日本":2,"action":"opened"}`, true},

	{"null kept pointer", `{"repository":null,"pull_request":{"head":{"repo":null}}}`, true},
	{"null kept struct", `{"pull_request":{"user":null,"head":null}}`, true},
	{"null kept scalars", `{"action":null,"pull_request":{"number":null,"draft":null}}`, true},
	{"bool kept", `{"pull_request":{"draft":true}}`, true},
	{"bool as string", `{"pull_request":{"draft":"true"}}`, false},
	{"object as array", `{"pull_request":{"head":{"repo":[]}}}`, false},
	{"string as object", `{"action":{}}`, false},
	{"nested empties", `{"a":[],"b":{},"c":[[],{}],"d":[{"e":[null,true,false,"",0]}],"action":"opened"}`, true},

	{"deep nesting at the limit", deepPayload(maxDepth), true},
	{"deep nesting past the limit", deepPayload(maxDepth + 1), false},
	{"very deep nesting", deepPayload(5 * maxDepth), false},
}

// deepPayload nests arrays in an unused field so that the document is depth
// deep, counting the top-level object.
func deepPayload(depth int) string {
	n := depth - 1
	return `{"action":"opened","x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
}

// TestScanCases: the scan takes or declines each case as listed, and what
// it takes, encoding/json takes and reads the same.
func TestScanCases(t *testing.T) {
	for _, tc := range scanCases {
		t.Run(tc.name, func(t *testing.T) {
			var got, want pullRequestPayload
			took := scanPullRequest([]byte(tc.payload), &got)
			err := json.Unmarshal([]byte(tc.payload), &want)
			if took != tc.take {
				t.Errorf("scan took = %v, want %v (encoding/json error: %v)", took, tc.take, err)
			}
			if !took {
				return
			}
			if err != nil {
				t.Fatalf("scan took a payload encoding/json rejects: %v", err)
			}
			if diff := cmp.Diff(got, want, allFields); diff != "" {
				t.Errorf("scan vs encoding/json (-got +want):\n%s", diff)
			}
		})
	}
}

// FuzzScanPullRequest: whenever the scan takes a payload, encoding/json
// takes it too and decodes the same.
func FuzzScanPullRequest(f *testing.F) {
	f.Add(fixture(f, "pull_request.opened.json"))
	f.Add(fixture(f, "pull_request.fork.json"))
	f.Add([]byte(`{"action":"opened","pull_request":{"number":1,"head":{"repo":null}},"repository":null}`))
	for _, tc := range scanCases {
		if len(tc.payload) < 1000 {
			f.Add([]byte(tc.payload))
		}
	}
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
