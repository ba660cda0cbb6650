package agenttest

import "strconv"

// anthropicWire speaks the Anthropic Messages API.
type anthropicWire struct{}

func (anthropicWire) errorBody(f Fault) any {
	typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		429: "rate_limit_error", 529: "overloaded_error"}[f.Status]
	return map[string]any{"type": "error", "error": map[string]any{"type": or(typ, "api_error"), "message": f.Message}}
}

func (anthropicWire) blocks(t Turn, id string) []map[string]any {
	var bs []map[string]any
	if t.Text != "" {
		bs = append(bs, map[string]any{"type": "text", "text": t.Text})
	}
	for i, c := range t.Calls {
		bs = append(bs, map[string]any{"type": "tool_use", "id": "toolu_" + id + "_" + strconv.Itoa(i), "name": c.Name, "input": orEmpty(c.Args)})
	}
	return bs
}

func stopReason(t Turn, tool, end string) string {
	if len(t.Calls) > 0 {
		return tool
	}
	return end
}

func (w anthropicWire) body(t Turn, id string) any {
	in, out := usage(t)
	return map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": "fake-model",
		"content": w.blocks(t, id), "stop_reason": stopReason(t, "tool_use", "end_turn"), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": out,
			"cache_creation_input_tokens": t.CacheWriteTokens, "cache_read_input_tokens": t.CacheReadTokens},
	}
}

func (w anthropicWire) events(t Turn, id string) []sse {
	in, out := usage(t)
	msg := map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": "fake-model", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": in, "output_tokens": 1,
			"cache_creation_input_tokens": t.CacheWriteTokens, "cache_read_input_tokens": t.CacheReadTokens},
	}
	evs := []sse{{"message_start", map[string]any{"type": "message_start", "message": msg}}}
	for i, b := range w.blocks(t, id) {
		start, delta := map[string]any{}, map[string]any{}
		if b["type"] == "text" {
			start = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b["text"]}
		} else {
			start = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": mustJSON(b["input"])}
		}
		evs = append(evs,
			sse{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start}},
			sse{"content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}},
			sse{"content_block_stop", map[string]any{"type": "content_block_stop", "index": i}})
	}
	return append(evs,
		sse{"message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stopReason(t, "tool_use", "end_turn"), "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": out}}},
		sse{"message_stop", map[string]any{"type": "message_stop"}})
}

func (anthropicWire) requestIDHeader() string { return "request-id" }
