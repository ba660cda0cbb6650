package agent

import (
	"context"
	"errors"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// openaiProvider speaks OpenAI-compatible chat completions (OpenAI, and
// local or hosted servers that mimic it).
type openaiProvider struct {
	chat openai.ChatCompletionService
}

// newOpenAI builds only the chat completions service, from explicit
// settings: openai.NewClient would read OPENAI_* variables of the bot's
// own environment (organisation, project, extra headers) with no way to
// turn that off.
func newOpenAI(baseURL, key string, hc *http.Client) *openaiProvider {
	opts := []option.RequestOption{
		option.WithBaseURL(baseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // retrying owns the policy
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return &openaiProvider{chat: openai.NewChatCompletionService(opts...)}
}

func (p *openaiProvider) Complete(ctx context.Context, req Request) (Response, error) {
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(req.Model),
		Messages: openaiMessages(req.System, req.Messages),
		Tools:    openaiTools(req.Tools),
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Effort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.Effort)
	}
	cc, err := p.chat.New(ctx, params)
	if err != nil {
		return Response{}, openaiError(err)
	}
	return openaiResponse(cc)
}

func openaiMessages(system string, msgs []Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for _, m := range msgs {
		switch {
		case m.Role == RoleAssistant:
			out = append(out, openaiAssistant(m))
		case len(m.ToolResults) > 0:
			// One tool message per result; chat completions has no
			// is_error flag, so the content says it.
			for _, r := range m.ToolResults {
				out = append(out, openai.ToolMessage(r.Content, r.CallID))
			}
			if m.Text != "" {
				out = append(out, openai.UserMessage(m.Text))
			}
		default:
			out = append(out, openai.UserMessage(m.Text))
		}
	}
	return out
}

func openaiAssistant(m Message) openai.ChatCompletionMessageParamUnion {
	a := &openai.ChatCompletionAssistantMessageParam{}
	if m.Text != "" {
		a.Content.OfString = openai.String(m.Text)
	}
	for _, c := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: a}
}

func openaiTools(specs []ToolSpec) []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(specs))
	for _, s := range specs {
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: s.Name, Description: openai.String(s.Description), Parameters: shared.FunctionParameters(s.Schema),
		}))
	}
	return out
}

func openaiResponse(cc *openai.ChatCompletion) (Response, error) {
	if len(cc.Choices) == 0 {
		return Response{}, &ProviderError{Provider: "openai", Status: 0, Message: "the response has no choices"}
	}
	ch := cc.Choices[0]
	r := Response{
		Message:    Message{Role: RoleAssistant, Text: ch.Message.Content},
		StopReason: ch.FinishReason,
		// prompt_tokens counts the cached ones too.
		Usage: Usage{InputTokens: cc.Usage.PromptTokens - cc.Usage.PromptTokensDetails.CachedTokens,
			CacheReadTokens: cc.Usage.PromptTokensDetails.CachedTokens, OutputTokens: cc.Usage.CompletionTokens},
	}
	for _, tc := range ch.Message.ToolCalls {
		r.Message.ToolCalls = append(r.Message.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	return r, nil
}

func openaiError(err error) error {
	pe := &ProviderError{Provider: "openai", Message: err.Error(), Err: err}
	var oe *openai.Error
	if errors.As(err, &oe) {
		pe.Status = oe.StatusCode
		pe.Message = or(oe.Message, apiErrorMessage(oe.RawJSON(), oe.StatusCode))
		if oe.Response != nil {
			pe.RetryAfter = retryAfter(oe.Response.Header)
		}
	}
	return pe
}
