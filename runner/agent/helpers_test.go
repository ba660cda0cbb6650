package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// Secrets planted in the fake host environment of these tests.
const (
	testAnthropicKey = "sk-ant-test-0123456789abcdef"
	testOpenAIKey    = "sk-test-openai-0123456789abcdef"
	testWebhook      = "webhook-secret-value-42"
	testGitHubToken  = "ghs_0123456789abcdefghijklmnop"
)

// testHost is a bot environment: the test process's PATH (bash, coreutils,
// go), a fake real HOME, and the bot's secrets.
func testHost(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{
		"PATH":                  sandbox.HostEnv()["PATH"],
		"HOME":                  t.TempDir(),
		"LANG":                  "C.UTF-8",
		"ANTHROPIC_API_KEY":     testAnthropicKey,
		"OPENAI_API_KEY":        testOpenAIKey,
		"GEMINI_API_KEY":        "AIzaTestGeminiKey0123456789",
		"KILROY_WEBHOOK_SECRET": testWebhook,
		"GITHUB_TOKEN":          testGitHubToken,
		"CLAUDECODE":            "1",
	}
}

func testDeps(t *testing.T) Deps {
	return Deps{
		HostEnv:      testHost(t),
		SecretNames:  []string{"KILROY_WEBHOOK_SECRET"},
		SecretValues: []string{testWebhook, testGitHubToken},
	}
}

// fastLimits keep retries quick; the tests poll nothing on time.
func fastLimits() Limits {
	return Limits{ProviderRetries: 2, RetryBackoff: Duration(1e6), RetryMaxBackoff: Duration(5e6)}
}

func newTestAgent(t *testing.T, cfg Config, deps Deps) *Agent {
	t.Helper()
	a, err := New(cfg, deps)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// testRequest is an attempt of node id in workspace ws, with the stage
// variables the engine would set.
func testRequest(t *testing.T, ws, id string) attractor.AgentRequest {
	t.Helper()
	stage := t.TempDir()
	return attractor.AgentRequest{
		RunID: "run1", Node: &attractor.Node{ID: id, Kind: attractor.KindCodergen},
		Prompt: "Fix the bug in main.go.", Workspace: ws, StageDir: stage, Attempt: 1,
		StageEnv: map[string]string{
			attractor.EnvStatusPath:         filepath.Join(stage, "status.json"),
			attractor.EnvStatusFallbackPath: filepath.Join(ws, attractor.StatusFallbackName),
			attractor.EnvRunID:              "run1",
			attractor.EnvNodeID:             id,
			attractor.EnvLogsDir:            stage,
		},
	}
}

func writeFileT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recorded is one request a fake provider received.
type recorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// fakeServer is an httptest model server answering from a script: the
// i-th request gets script[i] (the last entry repeats).
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	script []reply
}

type reply struct {
	status int
	header map[string]string
	body   any
}

func newFakeServer(t *testing.T, script ...reply) *fakeServer {
	t.Helper()
	f := &fakeServer{script: script}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	rep := f.script[min(len(f.reqs), len(f.script))-1]
	f.mu.Unlock()
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_ = json.NewEncoder(w).Encode(rep.body)
}

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}
