package agenttest_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/kilroy-bot/kilroy-bot/runner/agent/agenttest"
)

var script = []agenttest.Turn{
	agenttest.Tool("shell", map[string]any{"command": "ls"}),
	agenttest.Text("all done"),
}

// got is what a client made of the two scripted turns.
type got struct {
	Tool, Args, Text string
}

var want = got{Tool: "shell", Args: `{"command":"ls"}`, Text: "all done"}

// The official SDKs read the fake's answers, streamed and not, as they
// would read the real APIs'.
func TestAnthropicSDK(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := agenttest.New(t, script...)
		c := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
		params := anthropic.MessageNewParams{Model: "m", MaxTokens: 10,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
			Tools:    []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "shell", InputSchema: anthropic.ToolInputSchemaParam{}}}}}
		var g got
		for range 2 {
			var msg anthropic.Message
			if stream {
				s := c.Messages.NewStreaming(t.Context(), params)
				for s.Next() {
					if err := msg.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				m, err := c.Messages.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				msg = *m
			}
			for _, b := range msg.Content {
				switch b.Type {
				case "tool_use":
					g.Tool, g.Args = b.Name, string(b.Input)
				case "text":
					g.Text = b.Text
				}
			}
		}
		if diff := cmp.Diff(g, want); diff != "" {
			t.Errorf("stream=%v (-got +want):\n%s", stream, diff)
		}
	}
}

func TestOpenAIChatSDK(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := agenttest.New(t, script...)
		c := openai.NewClient(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
		params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "shell"})}}
		var g got
		for range 2 {
			var cc openai.ChatCompletion
			if stream {
				s := c.Chat.Completions.NewStreaming(t.Context(), params)
				acc := openai.ChatCompletionAccumulator{}
				for s.Next() {
					acc.AddChunk(s.Current())
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				cc = acc.ChatCompletion
			} else {
				r, err := c.Chat.Completions.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				cc = *r
			}
			m := cc.Choices[0].Message
			if len(m.ToolCalls) > 0 {
				g.Tool, g.Args = m.ToolCalls[0].Function.Name, m.ToolCalls[0].Function.Arguments
			} else {
				g.Text = m.Content
			}
		}
		if diff := cmp.Diff(g, want); diff != "" {
			t.Errorf("stream=%v (-got +want):\n%s", stream, diff)
		}
	}
}

func TestOpenAIResponsesSDK(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := agenttest.New(t, script...)
		c := openai.NewClient(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
		params := responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
			Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "shell"}}}}
		var g got
		for range 2 {
			var r responses.Response
			if stream {
				s := c.Responses.NewStreaming(t.Context(), params)
				for s.Next() {
					if ev := s.Current(); ev.Type == "response.completed" {
						r = ev.Response
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				resp, err := c.Responses.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				r = *resp
			}
			for _, it := range r.Output {
				if it.Type == "function_call" {
					g.Tool, g.Args = it.Name, it.Arguments.OfString
				}
			}
			if txt := r.OutputText(); txt != "" {
				g.Text = txt
			}
		}
		if diff := cmp.Diff(g, want); diff != "" {
			t.Errorf("stream=%v (-got +want):\n%s", stream, diff)
		}
	}
}

// Gemini has no SDK among our modules: read the documented JSON shape.
func TestGemini(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := agenttest.New(t, script...)
		var g got
		for range 2 {
			method := ":generateContent"
			if stream {
				method = ":streamGenerateContent?alt=sse"
			}
			resp, err := http.Post(srv.URL+"/v1beta/models/gemini-x"+method, "application/json",
				strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"shell"}]}]}`))
			if err != nil {
				t.Fatal(err)
			}
			var chunks []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					chunks = append(chunks, d)
				} else if !stream && sc.Text() != "" {
					chunks = append(chunks, sc.Text())
				}
			}
			resp.Body.Close()
			for _, c := range chunks {
				var doc struct {
					Candidates []struct {
						Content struct {
							Parts []struct {
								Text         string `json:"text"`
								FunctionCall *struct {
									Name string          `json:"name"`
									Args json.RawMessage `json:"args"`
								} `json:"functionCall"`
							} `json:"parts"`
						} `json:"content"`
					} `json:"candidates"`
				}
				if err := json.Unmarshal([]byte(c), &doc); err != nil {
					t.Fatalf("chunk %q: %v", c, err)
				}
				for _, p := range doc.Candidates[0].Content.Parts {
					if p.FunctionCall != nil {
						g.Tool, g.Args = p.FunctionCall.Name, string(p.FunctionCall.Args)
					}
					g.Text += p.Text
				}
			}
		}
		if diff := cmp.Diff(g, want); diff != "" {
			t.Errorf("stream=%v (-got +want):\n%s", stream, diff)
		}
	}
}

// Faults reach the SDK as the status and error document it would see from
// the real API, with the request-id header the real API sends with every
// answer; a cut stream is an error mid-stream, and a call without tools
// takes no turn.
func TestFaults(t *testing.T) {
	srv := agenttest.New(t, agenttest.Failing(agenttest.Overloaded), agenttest.Failing(agenttest.CutStream), agenttest.Text("ok"))
	c := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "shell", InputSchema: anthropic.ToolInputSchemaParam{}}}}
	params := anthropic.MessageNewParams{Model: "m", MaxTokens: 10, Tools: tools,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	side := params
	side.Tools = nil
	if _, err := c.Messages.New(t.Context(), side); err != nil {
		t.Fatalf("side call: %v", err)
	}
	_, err := c.Messages.New(t.Context(), params)
	var ae *anthropic.Error
	if !errorsAs(err, &ae) || ae.StatusCode != 529 || !strings.Contains(ae.RawJSON(), "overloaded_error") {
		t.Errorf("first call: %v, want HTTP 529 overloaded_error", err)
	}
	if ae != nil && !strings.HasPrefix(ae.RequestID, "req_") {
		t.Errorf("first call's request-id header = %q, want req_…", ae.RequestID)
	}
	s := c.Messages.NewStreaming(t.Context(), params)
	for s.Next() {
	}
	if s.Err() == nil {
		t.Errorf("a cut stream ended without an error")
	}
	m, err := c.Messages.New(t.Context(), params)
	if err != nil || m.Content[0].Text != "ok" {
		t.Errorf("third call: %v, %v", m, err)
	}
	if n := srv.Calls(); n != 3 {
		t.Errorf("calls that took a turn = %d, want 3", n)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// Reset gives a server a new script: the next request takes its first
// turn, and what came before is forgotten.
func TestReset(t *testing.T) {
	srv := agenttest.New(t, agenttest.Text("first script"))
	ask := func() string {
		c := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
		msg, err := c.Messages.New(t.Context(), anthropic.MessageNewParams{Model: "m", MaxTokens: 10,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
			Tools:    []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "shell", InputSchema: anthropic.ToolInputSchemaParam{}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return msg.Content[0].Text
	}
	ask()
	srv.Reset(agenttest.Text("second script"), agenttest.Text("second turn"))
	if got := []any{ask(), srv.Calls(), len(srv.Requests())}; !cmp.Equal(got, []any{"second script", 1, 1}) {
		t.Errorf("after Reset: answer, calls, requests = %v; want the new script's first turn and one request", got)
	}
}
