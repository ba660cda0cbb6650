package runpage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Agent transcripts. An agent node writes what it does as it goes, one
// JSON object a line: a CLI's own stream (Claude Code's stream-json,
// Codex's JSON events, in agent.stdout.jsonl) or the API loop's
// transcript.jsonl. TranscriptText turns such lines into text a person
// reads while the node still runs: what the agent said, the tools it
// called and what they answered, one entry a line or paragraph. A line
// that is not a JSON object is kept as written (a CLI's plain output).

// TranscriptFiles are the stage files that hold an agent's transcript, in
// the order they are looked for.
var TranscriptFiles = []string{"transcript.jsonl", "agent.stdout.jsonl", "agent.stdout.json"}

// transcriptClip bounds one entry: a tool's whole output is in the file.
const transcriptClip = 2000

// TranscriptText renders the transcript lines in data. The first line
// may be cut (data is a file's tail); a line that does not parse is kept
// as it is.
func TranscriptText(data []byte) string {
	var b strings.Builder
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		entry := string(line)
		if line[0] == '{' {
			var ev map[string]any
			if json.Unmarshal(line, &ev) == nil {
				entry = transcriptEntry(ev)
			}
		}
		if entry == "" {
			continue
		}
		b.WriteString(clipText(entry, transcriptClip) + "\n")
	}
	return b.String()
}

// transcriptEntry is one event as text, "" for bookkeeping events.
func transcriptEntry(ev map[string]any) string {
	kind := str(ev["kind"]) // the API loop
	if kind == "" {
		kind = str(ev["type"]) // the CLIs
	}
	switch kind {
	case "start":
		return "▶ " + strings.TrimSpace("agent started "+str(ev["model"]))
	case "assistant":
		if msg, ok := ev["message"].(map[string]any); ok { // Claude
			return contentText("🤖", msg["content"])
		}
		return joinNonEmpty("🤖 "+str(ev["text"]), toolCalls(ev["tool_calls"]))
	case "user":
		if msg, ok := ev["message"].(map[string]any); ok {
			return contentText("↩", msg["content"])
		}
	case "tool_result":
		return fmt.Sprintf("↩ %s: %s", str(ev["tool"]), str(ev["content"]))
	case "provider_error":
		return "⚠ provider error: " + str(ev["error"])
	case "result":
		return "■ result: " + firstNonEmptyStr(str(ev["result"]), str(ev["subtype"]))
	case "item.completed", "item.started": // Codex
		if item, ok := ev["item"].(map[string]any); ok {
			return codexItem(kind, item)
		}
	case "system", "turn.started", "turn.completed", "thread.started":
		return ""
	}
	for _, k := range []string{"text", "message", "content", "error"} {
		if s := str(ev[k]); s != "" {
			return s
		}
	}
	return ""
}

// contentText renders Claude's message content blocks.
func contentText(mark string, content any) string {
	blocks, _ := content.([]any)
	var parts []string
	for _, bl := range blocks {
		m, _ := bl.(map[string]any)
		switch str(m["type"]) {
		case "text":
			parts = append(parts, mark+" "+str(m["text"]))
		case "tool_use":
			parts = append(parts, "🔧 "+str(m["name"])+" "+compactJSON(m["input"]))
		case "tool_result":
			parts = append(parts, "↩ "+contentString(m["content"]))
		}
	}
	if s, ok := content.(string); ok {
		parts = append(parts, mark+" "+s)
	}
	return strings.Join(parts, "\n")
}

// contentString is a tool result's content: a string, or text blocks.
func contentString(c any) string {
	if s, ok := c.(string); ok {
		return s
	}
	blocks, _ := c.([]any)
	var parts []string
	for _, bl := range blocks {
		if m, ok := bl.(map[string]any); ok {
			parts = append(parts, str(m["text"]))
		}
	}
	return strings.Join(parts, "\n")
}

// codexItem renders one of Codex's items.
func codexItem(kind string, item map[string]any) string {
	typ := firstNonEmptyStr(str(item["type"]), str(item["item_type"]))
	switch typ {
	case "agent_message", "assistant_message", "reasoning":
		if kind == "item.completed" {
			return "🤖 " + str(item["text"])
		}
	case "command_execution":
		if kind == "item.started" {
			return "🔧 $ " + str(item["command"])
		}
		return "↩ " + str(item["aggregated_output"])
	case "file_change":
		return "🔧 file change " + compactJSON(item["changes"])
	}
	return ""
}

// toolCalls names the API loop's tool calls with their arguments.
func toolCalls(v any) string {
	calls, _ := v.([]any)
	var parts []string
	for _, c := range calls {
		m, _ := c.(map[string]any)
		parts = append(parts, "🔧 "+firstNonEmptyStr(str(m["Name"]), str(m["name"]))+" "+
			compactJSON(firstNonNilAny(m["Input"], m["input"], m["Arguments"], m["arguments"])))
	}
	return strings.Join(parts, "\n")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func compactJSON(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" && strings.TrimSpace(p) != "🤖" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n")
}

func firstNonEmptyStr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func firstNonNilAny(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// clipText shortens s to at most n bytes on a rune boundary, saying so.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}
