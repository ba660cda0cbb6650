package agent

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Anthropic Messages answers.
func anthropicToolUse(id, name string, input any) reply {
	return reply{status: 200, body: map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-test",
		"content":     []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}},
		"stop_reason": "tool_use", "usage": map[string]any{"input_tokens": 100, "output_tokens": 10},
	}}
}

func anthropicText(text string) reply {
	return reply{status: 200, body: map[string]any{
		"id": "msg_end", "type": "message", "role": "assistant", "model": "claude-test",
		"content":     []any{map[string]any{"type": "text", "text": text}},
		"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 100, "output_tokens": 10},
	}}
}

// OpenAI chat completion answers.
func openaiCalls(text string, calls ...[3]string) reply {
	var tcs []any
	for _, c := range calls {
		tcs = append(tcs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
	}
	msg := map[string]any{"role": "assistant", "content": text}
	finish := "stop"
	if len(tcs) > 0 {
		msg["tool_calls"] = tcs
		finish = "tool_calls"
	}
	return reply{status: 200, body: map[string]any{
		"id": "cc", "object": "chat.completion", "created": 1, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
	}}
}

func apiConfig(api, baseURL string) Config {
	return Config{
		Default: "api",
		Backends: map[string]Backend{"api": {
			Kind: KindAPI, API: api, BaseURL: baseURL, Model: "test-model",
			Prices: map[string]Price{"test-*": {Input: 3, Output: 15}},
		}},
		Limits: fastLimits(),
	}
}

func testWorktree(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	writeFileT(t, filepath.Join(ws, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	return ws
}

// The Anthropic loop: read, edit, shell, final answer. The fake server
// checks what a real API would need: the key header, the base URL's path,
// and each tool result answering the call before it.
func TestAnthropicLoop(t *testing.T) {
	first := anthropicToolUse("tu1", "read_file", map[string]any{"path": "main.go"})
	body := first.body.(map[string]any)
	body["content"] = append([]any{map[string]any{"type": "thinking", "thinking": "look first", "signature": "sig-1"}}, body["content"].([]any)...)
	srv := newFakeServer(t,
		first,
		anthropicToolUse("tu2", "edit_file", map[string]any{"path": "main.go", "old_string": `"hello"`, "new_string": `"fixed"`}),
		anthropicToolUse("tu3", "shell", map[string]any{"command": `grep -c fixed main.go; echo "node=$KILROY_NODE_ID"`}),
		anthropicText("Fixed the greeting.\nOUTCOME:SUCCESS"),
	)
	ws := testWorktree(t)
	a := newTestAgent(t, apiConfig(APIAnthropic, srv.URL+"/proxy/"), testDeps(t))
	req := testRequest(t, ws, "implement")
	o, err := a.Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != attractor.StatusSuccess || o.Response != "Fixed the greeting.\nOUTCOME:SUCCESS" {
		t.Errorf("outcome = %+v", o)
	}
	if got := readFileT(t, filepath.Join(ws, "main.go")); !strings.Contains(got, `println("fixed")`) {
		t.Errorf("main.go not edited:\n%s", got)
	}
	wantMeta := map[string]any{"tokens_in": int64(400), "tokens_out": int64(40), "cost_usd": (400*3.0 + 40*15.0) / 1e6,
		"turns": 4, "tool_rounds": 3, "agent_backend": "api", "agent_model": "test-model"}
	if diff := cmp.Diff(o.Meta, wantMeta); diff != "" {
		t.Errorf("meta (-got +want):\n%s", diff)
	}

	reqs := srv.requests()
	if len(reqs) != 4 {
		t.Fatalf("server got %d requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		if r.Path != "/proxy/v1/messages" || r.Header.Get("X-Api-Key") != testAnthropicKey || r.Body["model"] != "test-model" {
			t.Errorf("request %d: path %s, key %q, model %v", i, r.Path, r.Header.Get("X-Api-Key"), r.Body["model"])
		}
	}
	if tools := toolNames(reqs[0].Body["tools"], "name"); !cmp.Equal(tools, []string{"read_file", "write_file", "edit_file", "shell", "glob", "grep"}) {
		t.Errorf("tools offered: %v", tools)
	}
	if sys := jsonText(reqs[0].Body["system"]); !strings.Contains(sys, "KILROY_STAGE_STATUS_PATH") || !strings.Contains(sys, "OUTCOME:SUCCESS") {
		t.Errorf("system prompt lacks the status contract:\n%s", sys)
	}
	// The signed thinking goes back with the tool call it led to.
	if msgs := jsonText(reqs[1].Body["messages"]); !strings.Contains(msgs, `{"signature":"sig-1","thinking":"look first","type":"thinking"}`) {
		t.Errorf("thinking block not replayed: %s", msgs)
	}
	checks := []struct {
		req      int
		id, want string
	}{
		{1, "tu1", `4 | \tprintln(\"hello\")`},
		{2, "tu2", "replaced 1 occurrence"},
		{3, "tu3", `exit code 0`},
		{3, "tu3", `node=implement`},
	}
	for _, c := range checks {
		last := lastMessage(t, reqs[c.req].Body)
		if !strings.Contains(last, `"tool_use_id":"`+c.id+`"`) || !strings.Contains(last, c.want) {
			t.Errorf("request %d: last message lacks the result of %s containing %q:\n%s", c.req, c.id, c.want, last)
		}
	}
	checkRecords(t, req.StageDir, testAnthropicKey)
}

// The OpenAI-compatible loop, same script.
func TestOpenAILoop(t *testing.T) {
	srv := newFakeServer(t,
		openaiCalls("", [3]string{"c1", "read_file", `{"path":"main.go"}`}),
		openaiCalls("editing", [3]string{"c2", "edit_file", `{"path":"main.go","old_string":"\"hello\"","new_string":"\"fixed\""}`}),
		openaiCalls("", [3]string{"c3", "shell", `{"command":"grep -c fixed main.go"}`}),
		openaiCalls("Done. outcome=pass"),
	)
	ws := testWorktree(t)
	a := newTestAgent(t, apiConfig(APIOpenAI, srv.URL+"/v1/"), testDeps(t))
	req := testRequest(t, ws, "implement")
	req.Node.ReasoningEffort = "high"
	o, err := a.Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != attractor.StatusSuccess || o.Meta["tokens_in"] != int64(200) || o.Meta["tokens_out"] != int64(20) {
		t.Errorf("outcome = %+v", o)
	}
	if got := readFileT(t, filepath.Join(ws, "main.go")); !strings.Contains(got, `println("fixed")`) {
		t.Errorf("main.go not edited:\n%s", got)
	}
	reqs := srv.requests()
	if len(reqs) != 4 {
		t.Fatalf("server got %d requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+testOpenAIKey || r.Body["reasoning_effort"] != "high" {
			t.Errorf("request %d: path %s, auth %q, effort %v", i, r.Path, r.Header.Get("Authorization"), r.Body["reasoning_effort"])
		}
	}
	if tools := toolNames(reqs[0].Body["tools"], "function"); len(tools) != 6 {
		t.Errorf("tools offered: %v", tools)
	}
	for i, want := range map[int][2]string{1: {"c1", "1 | package main"}, 2: {"c2", "replaced 1"}, 3: {"c3", "exit code 0"}} {
		last := lastMessage(t, reqs[i].Body)
		if !strings.Contains(last, `"tool_call_id":"`+want[0]+`"`) || !strings.Contains(last, want[1]) || !strings.Contains(last, `"role":"tool"`) {
			t.Errorf("request %d: last message lacks the tool result %v:\n%s", i, want, last)
		}
	}
	checkRecords(t, req.StageDir, testOpenAIKey)
}

// Malformed arguments and an unknown tool are answered with tool errors
// and the loop goes on to the model's final answer.
func TestBadToolCallsContinue(t *testing.T) {
	srv := newFakeServer(t,
		openaiCalls("", [3]string{"c1", "read_file", `{"path": "main.go"`}, [3]string{"c2", "launch_missiles", `{}`}),
		openaiCalls("", [3]string{"c3", "edit_file", `{"path": 7}`}),
		openaiCalls("gave up. OUTCOME:FAIL"),
	)
	a := newTestAgent(t, apiConfig(APIOpenAI, srv.URL+"/v1/"), testDeps(t))
	o, err := a.Run(t.Context(), testRequest(t, testWorktree(t), "implement"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != attractor.StatusFail || o.FailureClass != attractor.ClassDeterministic || !strings.Contains(o.FailureReason, "OUTCOME:FAIL") {
		t.Errorf("outcome = %+v", o)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("server got %d requests, want 3", len(reqs))
	}
	body, _ := json.Marshal(reqs[1].Body["messages"])
	for _, want := range []string{"invalid arguments", `unknown tool \"launch_missiles\"`, `"tool_call_id":"c1"`, `"tool_call_id":"c2"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("second request lacks %q:\n%s", want, body)
		}
	}
	if last := lastMessage(t, reqs[2].Body); !strings.Contains(last, "invalid arguments") {
		t.Errorf("third request lacks the edit_file error:\n%s", last)
	}
}

func toolNames(v any, key string) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		switch n := m[key].(type) {
		case string:
			out = append(out, n)
		case map[string]any:
			out = append(out, n["name"].(string))
		}
	}
	return out
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// lastMessage is the JSON of the last message of a recorded request, or,
// for OpenAI's one-message-per-result shape, of the messages after the
// last assistant message.
func lastMessage(t *testing.T, body map[string]any) string {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatal("request has no messages")
	}
	i := len(msgs) - 1
	for i > 0 {
		if m, _ := msgs[i-1].(map[string]any); m["role"] == "assistant" {
			break
		}
		i--
	}
	return jsonText(msgs[i:])
}

// checkRecords checks the stage directory's transcript and usage records
// exist, parse, and never hold the key.
func checkRecords(t *testing.T, stage, key string) {
	t.Helper()
	f, err := os.Open(filepath.Join(stage, "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("transcript line %q: %v", sc.Text(), err)
		}
		kinds[ev["kind"].(string)]++
	}
	if kinds["start"] != 1 || kinds["assistant"] == 0 || kinds["tool_result"] == 0 {
		t.Errorf("transcript event kinds: %v", kinds)
	}
	for _, name := range []string{"transcript.jsonl", "usage.json", "agent.json"} {
		if b := readFileT(t, filepath.Join(stage, name)); strings.Contains(b, key) {
			t.Errorf("%s holds the provider key", name)
		}
	}
	var usage map[string]any
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(stage, "usage.json"))), &usage); err != nil || usage["input_tokens"] == nil {
		t.Errorf("usage.json = %v, %v", usage, err)
	}
}

// Calls without an ID (some OpenAI-compatible servers) get one, and the
// results answer them by it.
func TestToolCallsWithoutID(t *testing.T) {
	srv := newFakeServer(t,
		openaiCalls("", [3]string{"", "glob", `{"pattern":"*.go"}`}),
		openaiCalls("OUTCOME:SUCCESS"),
	)
	a := newTestAgent(t, apiConfig(APIOpenAI, srv.URL+"/v1/"), testDeps(t))
	if _, err := a.Run(t.Context(), testRequest(t, testWorktree(t), "n")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if last := lastMessage(t, reqs[1].Body); !strings.Contains(last, `"tool_call_id":"call_1_1"`) || !strings.Contains(last, "main.go") {
		t.Errorf("second request: %s", last)
	}
	if all := jsonText(reqs[1].Body["messages"]); !strings.Contains(all, `"id":"call_1_1"`) {
		t.Errorf("the assistant call was not replayed with its ID: %s", all)
	}
}
