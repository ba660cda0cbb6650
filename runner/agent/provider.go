package agent

import (
	"context"
	"fmt"
	"time"
)

// Provider is one model API as the agent loop sees it: a single call that
// takes the conversation so far and returns the model's next message.
// Implementations translate to and from their wire protocol and report
// failed calls as *ProviderError; retrying is the caller's business.
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	Effort    string // reasoning effort; "" leaves the provider default
}

// Role of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one conversation entry. A user message carries text or tool
// results; an assistant message carries text and tool calls.
type Message struct {
	Role Role `json:"role"`
	// Thinking is the model's signed reasoning, which Anthropic requires
	// back unchanged alongside the tool calls it led to.
	Thinking    []Thinking   `json:"thinking,omitempty"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// Thinking is one reasoning block: readable text with its signature, or
// redacted data.
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

// ToolCall is a tool invocation the model asked for. Args is the raw JSON
// text as the model wrote it, possibly malformed.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// ToolSpec describes a tool to the model; Schema is a JSON Schema object.
type ToolSpec struct {
	Name        string
	Description string
	Schema      map[string]any
}

// Response is the model's answer to one Request.
type Response struct {
	Message    Message // role assistant
	StopReason string
	Usage      Usage
}

// Usage counts tokens by kind; the kinds are disjoint (InputTokens are
// the uncached input), as the providers bill them.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

func (u *Usage) add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CacheReadTokens += v.CacheReadTokens
	u.CacheWriteTokens += v.CacheWriteTokens
}

func (u Usage) sub(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens - v.InputTokens, OutputTokens: u.OutputTokens - v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens - v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens - v.CacheWriteTokens}
}

func (u Usage) tokens() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// ProviderError is a failed model call.
type ProviderError struct {
	Provider string
	Status   int // HTTP status; 0 when no answer arrived
	Message  string
	// RetryAfter is what the server asked to wait, if it said.
	RetryAfter time.Duration
	Err        error // the underlying error, for errors.Is/As
	// Attempts is how many times the call was made, retries included (0
	// when no retry policy saw it).
	Attempts int
}

func (e *ProviderError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %s", e.Provider, e.Message)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// retryable reports whether the call may succeed when repeated: a
// timeout, a conflict, rate limiting, a server error, or no answer at all.
func (e *ProviderError) retryable() bool {
	switch {
	case e.Status == 0:
		return true
	case e.Status == 408 || e.Status == 409 || e.Status == 429:
		return true
	}
	return e.Status >= 500
}

// authFailure reports a rejected key, which no retry fixes.
func (e *ProviderError) authFailure() bool {
	return e.Status == 401 || e.Status == 403
}
