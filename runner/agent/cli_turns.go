package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// Codex has no turn limit of its own (no flag, no setting), so the bot
// enforces agents.limits.max_turns on it from its --json event stream, with
// the meaning Claude Code's --max-turns and Gemini's maxSessionTurns give
// it: at most max_turns model calls; the tools the last one asked for run,
// and the CLI is stopped before it asks the model again.
//
// The stream does not show where one model call ends: every completed
// tool call's result goes back to the model in a next call, so the bot
// counts the first call plus one per completed tool call. That is exact
// when the model calls one tool per turn and stricter when it calls
// several at once.

// codexTurnWatch passes Codex's stdout on to w and counts its tool calls
// as they arrive; once the model would be called a (max+1)th time it calls
// stop (once), which ends the CLI's process group.
type codexTurnWatch struct {
	w    io.Writer
	max  int
	stop func()

	mu    sync.Mutex
	lines lineBuffer
	seen  map[string]bool
	calls int  // completed tool calls
	hit   bool // stop was called
}

// maxWatchedLine bounds how much of a line the watch keeps: an event's
// type and its item's id and type come first, a tool's whole output after
// them.
const maxWatchedLine = 64 << 10

func newCodexTurnWatch(w io.Writer, max int, stop func()) *codexTurnWatch {
	return &codexTurnWatch{w: w, max: max, stop: stop, seen: map[string]bool{}, lines: lineBuffer{max: maxWatchedLine}}
}

// Write passes p on, then reads the events it completes.
func (c *codexTurnWatch) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines.feed(p, c.event)
	return n, err
}

// event counts a completed tool call in one line of the stream. A plan
// (todo_list) is not one: Codex completes it only when the session ends.
func (c *codexTurnWatch) event(line []byte) {
	typ, id, itemType := eventHead(line)
	if typ != "item.completed" || c.seen[id] {
		return
	}
	switch itemType {
	case "agent_message", "assistant_message", "reasoning", "error", "todo_list", "":
		return
	}
	c.seen[id] = true
	c.calls++
	if 1+c.calls > c.max && !c.hit {
		c.hit = true
		c.stop()
	}
}

// limitHit reports whether the watch stopped the CLI.
func (c *codexTurnWatch) limitHit() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hit
}

// eventHead reads an event's type and its item's id and type from the
// start of a line, which may be cut short after them.
func eventHead(line []byte) (typ, id, itemType string) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if !delim(dec, '{') {
		return "", "", ""
	}
	for dec.More() && (typ == "" || id == "" || itemType == "") {
		switch key, _ := dec.Token(); key {
		case "type":
			typ = str(dec)
		case "item":
			if !delim(dec, '{') {
				return typ, id, itemType
			}
			for dec.More() {
				switch k, _ := dec.Token(); k {
				case "id":
					id = str(dec)
				case "type":
					itemType = str(dec)
				default:
					if !skip(dec) {
						return typ, id, itemType
					}
				}
				if typ != "" && id != "" && itemType != "" {
					return typ, id, itemType
				}
			}
			if !delim(dec, '}') {
				return typ, id, itemType
			}
		default:
			if !skip(dec) {
				return typ, id, itemType
			}
		}
	}
	return typ, id, itemType
}

func delim(dec *json.Decoder, d json.Delim) bool {
	t, err := dec.Token()
	return err == nil && t == d
}

func str(dec *json.Decoder) string {
	t, _ := dec.Token()
	s, _ := t.(string)
	return s
}

func skip(dec *json.Decoder) bool {
	var v json.RawMessage
	return dec.Decode(&v) == nil
}
