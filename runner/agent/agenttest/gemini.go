package agenttest

import (
	"encoding/json"
	"strings"
)

// geminiWire speaks the Gemini API (generativelanguage v1beta).
type geminiWire struct{ model string }

func geminiModel(path string) string {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "fake-model"
	}
	m, _, _ := strings.Cut(path[i+len("/models/"):], ":")
	return m
}

func (geminiWire) errorBody(f Fault) any {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
		429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[f.Status]
	return map[string]any{"error": map[string]any{"code": f.Status, "message": f.Message, "status": or(st, "INTERNAL")}}
}

func (w geminiWire) body(t Turn, _ string) any {
	var parts []any
	if t.Text != "" {
		parts = append(parts, map[string]any{"text": t.Text})
	}
	for _, c := range t.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": orEmpty(c.Args)}})
	}
	in, out := usage(t)
	in += t.CacheReadTokens // promptTokenCount counts the cached ones
	meta := map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}
	if t.CacheReadTokens > 0 {
		meta["cachedContentTokenCount"] = t.CacheReadTokens
	}
	return map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": meta,
		"modelVersion":  w.model,
	}
}

// events stream the answer as one chunk per part, usage on the last.
func (w geminiWire) events(t Turn, id string) []sse {
	full := w.body(t, id).(map[string]any)
	cand := full["candidates"].([]any)[0].(map[string]any)
	parts, _ := cand["content"].(map[string]any)["parts"].([]any)
	if len(parts) == 0 {
		parts = []any{map[string]any{"text": ""}}
	}
	var evs []sse
	for i, p := range parts {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": []any{p}}, "index": 0}
		chunk := map[string]any{"candidates": []any{c}, "modelVersion": w.model}
		if i == len(parts)-1 {
			c["finishReason"] = "STOP"
			chunk["usageMetadata"] = full["usageMetadata"]
		}
		evs = append(evs, sse{data: chunk})
	}
	if len(evs) == 1 { // a cut stream needs something to cut after
		evs = append([]sse{{data: map[string]any{"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": ""}}}, "index": 0}}}}}, evs...)
	}
	return evs
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The Gemini API names no request in its headers.
func (geminiWire) requestIDHeader() string { return "" }
