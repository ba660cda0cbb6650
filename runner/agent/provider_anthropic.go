package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicProvider speaks the Anthropic Messages API.
type anthropicProvider struct {
	client anthropic.Client
}

// newAnthropic builds a client from explicit settings only: the SDK's
// environment defaults (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles)
// would read the bot's own environment behind the configuration's back.
func newAnthropic(baseURL, key string, hc *http.Client) *anthropicProvider {
	return &anthropicProvider{client: anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(baseURL),
		option.WithAPIKey(key),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // retrying owns the policy
	)}
}

func (p *anthropicProvider) Complete(ctx context.Context, req Request) (Response, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: int64(req.MaxTokens),
		Messages:  anthropicMessages(req.Messages),
		Tools:     anthropicTools(req.Tools),
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	if req.Effort != "" {
		params.OutputConfig = anthropic.OutputConfigParam{Effort: anthropicEffort(req.Effort)}
	}
	msg, err := p.client.Messages.New(ctx, params)
	if err != nil {
		return Response{}, anthropicError(err)
	}
	return anthropicResponse(msg), nil
}

func anthropicEffort(e string) anthropic.OutputConfigEffort {
	if e == "minimal" {
		return anthropic.OutputConfigEffortLow // the API has no "minimal"
	}
	return anthropic.OutputConfigEffort(e)
}

func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	out := make([]anthropic.MessageParam, 0, len(msgs))
	for _, m := range msgs {
		var blocks []anthropic.ContentBlockParamUnion
		for _, th := range m.Thinking { // first, as the model produced them
			if th.Redacted != "" {
				blocks = append(blocks, anthropic.NewRedactedThinkingBlock(th.Redacted))
			} else {
				blocks = append(blocks, anthropic.NewThinkingBlock(th.Signature, th.Text))
			}
		}
		if m.Text != "" { // the API rejects empty text blocks
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, json.RawMessage(validJSONObject(c.Args)), c.Name))
		}
		for _, r := range m.ToolResults {
			blocks = append(blocks, anthropic.NewToolResultBlock(r.CallID, r.Content, r.IsError))
		}
		if m.Role == RoleAssistant {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	return out
}

// validJSONObject returns args when it is a JSON object, else "{}": a
// malformed call is answered with a tool error, but replaying it verbatim
// would make every later request invalid.
func validJSONObject(args string) string {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil {
		return "{}"
	}
	return args
}

func anthropicTools(specs []ToolSpec) []anthropic.ToolUnionParam {
	out := make([]anthropic.ToolUnionParam, 0, len(specs))
	for _, s := range specs {
		schema := anthropic.ToolInputSchemaParam{Properties: s.Schema["properties"]}
		if req, ok := s.Schema["required"].([]string); ok {
			schema.Required = req
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name: s.Name, Description: anthropic.String(s.Description), InputSchema: schema,
		}})
	}
	return out
}

func anthropicResponse(msg *anthropic.Message) Response {
	r := Response{
		Message:    Message{Role: RoleAssistant},
		StopReason: string(msg.StopReason),
		Usage: Usage{
			InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens,
			CacheReadTokens: msg.Usage.CacheReadInputTokens, CacheWriteTokens: msg.Usage.CacheCreationInputTokens,
		},
	}
	var text []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "thinking":
			r.Message.Thinking = append(r.Message.Thinking, Thinking{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			r.Message.Thinking = append(r.Message.Thinking, Thinking{Redacted: b.Data})
		case "tool_use":
			r.Message.ToolCalls = append(r.Message.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: string(b.Input)})
		}
	}
	r.Message.Text = strings.Join(text, "\n")
	return r
}

func anthropicError(err error) error {
	pe := &ProviderError{Provider: "anthropic", Message: err.Error(), Err: err}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		pe.Status = ae.StatusCode
		pe.Message = apiErrorMessage(ae.RawJSON(), ae.StatusCode)
		if ae.Response != nil {
			pe.RetryAfter = retryAfter(ae.Response.Header)
		}
	}
	return pe
}
