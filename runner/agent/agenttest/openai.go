package agenttest

import "strconv"

func openaiError(f Fault) any {
	typ := map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 429: "rate_limit_error"}[f.Status]
	code := map[int]string{401: "invalid_api_key", 429: "rate_limit_exceeded"}[f.Status]
	return map[string]any{"error": map[string]any{"type": or(typ, "server_error"), "message": f.Message, "code": code, "param": nil}}
}

// chatWire speaks OpenAI Chat Completions.
type chatWire struct{}

func (chatWire) errorBody(f Fault) any { return openaiError(f) }

func chatCalls(t Turn, id string) []any {
	var tcs []any
	for i, c := range t.Calls {
		tcs = append(tcs, map[string]any{"index": i, "id": "call_" + id + "_" + strconv.Itoa(i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": argsJSON(c)}})
	}
	return tcs
}

func chatUsage(t Turn) map[string]any {
	in, out := usage(t)
	in += t.CacheReadTokens // prompt_tokens counts the cached ones
	return map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
		"prompt_tokens_details": map[string]any{"cached_tokens": t.CacheReadTokens}}
}

func (chatWire) body(t Turn, id string) any {
	msg := map[string]any{"role": "assistant", "content": t.Text}
	if tcs := chatCalls(t, id); len(tcs) > 0 {
		msg["tool_calls"] = tcs
	}
	return map[string]any{
		"id": "chatcmpl-" + id, "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": stopReason(t, "tool_calls", "stop")}},
		"usage":   chatUsage(t),
	}
}

func (chatWire) events(t Turn, id string) []sse {
	chunk := func(delta map[string]any, finish any) sse {
		return sse{data: map[string]any{"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}}
	}
	evs := []sse{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if t.Text != "" {
		evs = append(evs, chunk(map[string]any{"content": t.Text}, nil))
	}
	if tcs := chatCalls(t, id); len(tcs) > 0 {
		evs = append(evs, chunk(map[string]any{"tool_calls": tcs}, nil))
	}
	evs = append(evs, chunk(map[string]any{}, stopReason(t, "tool_calls", "stop")))
	evs = append(evs, sse{data: map[string]any{"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": 1,
		"model": "fake-model", "choices": []any{}, "usage": chatUsage(t)}})
	return append(evs, sse{data: "[DONE]"})
}

// responsesWire speaks the OpenAI Responses API.
type responsesWire struct{}

func (responsesWire) errorBody(f Fault) any { return openaiError(f) }

func (responsesWire) output(t Turn, id string) []any {
	var out []any
	if t.Text != "" {
		out = append(out, map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}})
	}
	for i, c := range t.Calls {
		n := id + "_" + strconv.Itoa(i)
		out = append(out, map[string]any{"type": "function_call", "id": "fc_" + n, "call_id": "call_" + n,
			"name": c.Name, "arguments": argsJSON(c), "status": "completed"})
	}
	return out
}

func (w responsesWire) body(t Turn, id string) any {
	return w.response(t, id, "completed", w.output(t, id))
}

func (responsesWire) response(t Turn, id, status string, output []any) map[string]any {
	in, out := usage(t)
	in += t.CacheReadTokens // input_tokens counts the cached ones
	return map[string]any{
		"id": "resp_" + id, "object": "response", "created_at": 1, "status": status, "model": "fake-model",
		"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"usage": map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out,
			"input_tokens_details": map[string]any{"cached_tokens": t.CacheReadTokens}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}},
	}
}

func (w responsesWire) events(t Turn, id string) []sse {
	seq := 0
	ev := func(typ string, fields map[string]any) sse {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return sse{typ, fields}
	}
	evs := []sse{
		ev("response.created", map[string]any{"response": w.response(t, id, "in_progress", []any{})}),
		ev("response.in_progress", map[string]any{"response": w.response(t, id, "in_progress", []any{})}),
	}
	for i, item := range w.output(t, id) {
		it := item.(map[string]any)
		evs = append(evs, ev("response.output_item.added", map[string]any{"output_index": i, "item": it}))
		if it["type"] == "message" {
			evs = append(evs, ev("response.output_text.delta", map[string]any{"output_index": i, "item_id": it["id"],
				"content_index": 0, "delta": t.Text, "logprobs": []any{}}))
		}
		evs = append(evs, ev("response.output_item.done", map[string]any{"output_index": i, "item": it}))
	}
	return append(evs, ev("response.completed", map[string]any{"response": w.body(t, id)}))
}

func (chatWire) requestIDHeader() string      { return "x-request-id" }
func (responsesWire) requestIDHeader() string { return "x-request-id" }
