package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// tool is one tool of the API loop.
type tool interface {
	spec() ToolSpec
	// run executes a call; an error becomes a tool error result the model
	// sees, never a failure of the node.
	run(ctx context.Context, args json.RawMessage) (string, error)
}

// toolbox dispatches tool calls by name.
type toolbox struct {
	tools map[string]tool
	names []string // in the order offered to the model
}

func newToolbox(ts ...tool) *toolbox {
	tb := &toolbox{tools: make(map[string]tool, len(ts))}
	for _, t := range ts {
		name := t.spec().Name
		tb.tools[name] = t
		tb.names = append(tb.names, name)
	}
	return tb
}

func (tb *toolbox) specs() []ToolSpec {
	out := make([]ToolSpec, 0, len(tb.names))
	for _, n := range tb.names {
		out = append(out, tb.tools[n].spec())
	}
	return out
}

// call runs one tool call and always returns a result for the model:
// unknown tools, malformed arguments and failures are tool errors, so the
// model can correct itself and the loop goes on.
func (tb *toolbox) call(ctx context.Context, c ToolCall) ToolResult {
	t, ok := tb.tools[c.Name]
	if !ok {
		return ToolResult{CallID: c.ID, IsError: true,
			Content: fmt.Sprintf("unknown tool %q; the tools are: %s", c.Name, strings.Join(tb.names, ", "))}
	}
	args := strings.TrimSpace(c.Args)
	if args == "" {
		args = "{}"
	}
	out, err := t.run(ctx, json.RawMessage(args))
	if err != nil {
		return ToolResult{CallID: c.ID, IsError: true, Content: fmt.Sprintf("%s failed: %v", c.Name, err)}
	}
	return ToolResult{CallID: c.ID, Content: out}
}

// decodeArgs decodes a call's JSON arguments strictly and checks the
// required string fields, so a malformed call gets an error that says
// what was expected.
func decodeArgs(raw json.RawMessage, dst any, required ...string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("invalid arguments (%v); send a JSON object with %s", err, strings.Join(required, ", "))
	}
	var present map[string]json.RawMessage
	_ = json.Unmarshal(raw, &present) // valid: Decode above succeeded
	var missing []string
	for _, k := range required {
		if _, ok := present[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("invalid arguments: missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// schema builds a JSON Schema object from property definitions.
func schema(required []string, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": slices.Clone(required)}
}

func prop(typ, desc string) map[string]any {
	return map[string]any{"type": typ, "description": desc}
}

// Truncation of tool output before it reaches the model: the head and tail
// of a file or command output both matter; for listings the end is kept.
const (
	headTail = iota
	tailOnly
)

func truncate(s string, limit, mode int) string {
	if len(s) <= limit {
		return s
	}
	removed := len(s) - limit
	if mode == tailOnly {
		return fmt.Sprintf("[output truncated: the first %d characters were removed; narrow the request to see them]\n", removed) +
			s[len(s)-limit:]
	}
	half := limit / 2
	return s[:half] + fmt.Sprintf("\n\n[output truncated: %d characters were removed from the middle; "+
		"narrow the request (a line range, a more specific pattern) to see them]\n\n", removed) + s[len(s)-half:]
}
