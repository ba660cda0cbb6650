package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// cliReport is what a CLI's output says about its run.
type cliReport struct {
	Response string // the agent's final text
	Usage    Usage
	Model    string   // the model the CLI says it used, when it says
	Cost     *float64 // the cost the CLI reported, if it did
	Error    string   // an error the CLI reported in its output
	Limit    bool     // the CLI stopped at its own turn limit
	// Unfinished: the CLI's output lacks the closing event its format
	// always ends with (Claude's "result"): the session was cut short.
	Unfinished bool
	// Retried: the CLI retried its model call before it failed (Codex's
	// "Reconnecting... N/M"). It does so only for a failed request or a
	// dropped stream; unless a status says otherwise, the provider or the
	// network failed (Codex names no status for a 5xx).
	Retried bool
}

// maxResponse bounds the response kept from a CLI that prints without
// structure; the end is kept, where agents summarise.
const maxResponse = 1 << 20

// parseCLIOutput reads a CLI's stdout in the format of its flavour.
func parseCLIOutput(flavour string, out []byte) cliReport {
	switch flavour {
	case CLIClaude:
		return parseClaude(out)
	case CLICodex:
		return parseCodex(out)
	case CLIGemini:
		return parseGemini(out)
	}
	s := string(out)
	if len(s) > maxResponse {
		s = s[len(s)-maxResponse:]
	}
	return cliReport{Response: strings.TrimSpace(s)}
}

// jsonLines calls fn with the "type" and the text of every line of out
// that is a JSON object; other lines (a truncation marker, stray logging)
// are skipped, and so are lines too long to be an event worth reading.
func jsonLines(out []byte, fn func(typ string, line []byte)) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &ev) == nil {
			fn(ev.Type, line)
		}
	}
}

// parseClaude reads Claude Code's stream-json: the closing "result" event
// carries the final text, is_error, the subtype (error_max_turns when it
// hit its turn limit), total_cost_usd and usage.
func parseClaude(out []byte) cliReport {
	r := cliReport{Unfinished: true}
	jsonLines(out, func(typ string, line []byte) {
		switch typ {
		case "system":
			var ev struct {
				Subtype string `json:"subtype"`
				Model   string `json:"model"`
			}
			if json.Unmarshal(line, &ev) == nil && ev.Subtype == "init" {
				r.Model = ev.Model
			}
		case "assistant":
			if t := claudeText(line); t != "" {
				r.Response = t // a fallback if no result event comes
			}
		case "result":
			var ev struct {
				Subtype string   `json:"subtype"`
				IsError bool     `json:"is_error"`
				Result  string   `json:"result"`
				Cost    *float64 `json:"total_cost_usd"`
				OldCost *float64 `json:"cost_usd"`
				Usage   struct {
					Input       int64 `json:"input_tokens"`
					CacheCreate int64 `json:"cache_creation_input_tokens"`
					CacheRead   int64 `json:"cache_read_input_tokens"`
					Output      int64 `json:"output_tokens"`
				} `json:"usage"`
			}
			if json.Unmarshal(line, &ev) != nil {
				return
			}
			r.Unfinished = false
			if ev.Result != "" {
				r.Response = ev.Result
			}
			r.Usage = Usage{InputTokens: ev.Usage.Input, OutputTokens: ev.Usage.Output,
				CacheReadTokens: ev.Usage.CacheRead, CacheWriteTokens: ev.Usage.CacheCreate}
			r.Cost = firstNonNil(ev.Cost, ev.OldCost)
			r.Limit = ev.Subtype == "error_max_turns"
			if ev.IsError && !r.Limit {
				r.Error = or(ev.Result, ev.Subtype)
			}
		}
	})
	return r
}

func claudeText(line []byte) string {
	var ev struct {
		Message struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return ""
	}
	var parts []string
	for _, c := range ev.Message.Content {
		if c.Type == "text" && c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// joinModel lists the models of a session that used several.
func joinModel(have, name string) string {
	if have == "" {
		return name
	}
	return have + "," + name
}

func firstNonNil(ps ...*float64) *float64 {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// parseCodex reads `codex exec --json`: agent messages arrive as completed
// items, usage with every completed turn, failures as turn.failed or error.
func parseCodex(out []byte) cliReport {
	var r cliReport
	jsonLines(out, func(typ string, line []byte) {
		switch typ {
		case "item.completed":
			var ev struct {
				Item struct {
					Type     string `json:"type"`
					ItemType string `json:"item_type"` // older releases
					Text     string `json:"text"`
				} `json:"item"`
			}
			if json.Unmarshal(line, &ev) == nil && ev.Item.Text != "" {
				if t := or(ev.Item.Type, ev.Item.ItemType); t == "agent_message" || t == "assistant_message" {
					r.Response = ev.Item.Text
				}
			}
		case "turn.completed":
			// input_tokens counts the cached ones too.
			var ev struct {
				Usage struct {
					Input  int64 `json:"input_tokens"`
					Cached int64 `json:"cached_input_tokens"`
					Output int64 `json:"output_tokens"`
				} `json:"usage"`
			}
			if json.Unmarshal(line, &ev) == nil {
				r.Usage.add(Usage{InputTokens: ev.Usage.Input - ev.Usage.Cached, CacheReadTokens: ev.Usage.Cached, OutputTokens: ev.Usage.Output})
			}
		case "turn.failed":
			var ev struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(line, &ev) == nil {
				r.Error = or(ev.Error.Message, "turn failed")
			}
		case "error":
			var ev struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(line, &ev) // the type decoded, so the line is valid JSON
			if strings.HasPrefix(ev.Message, "Reconnecting...") {
				// Codex retrying a failed request or a dropped stream; if
				// it gives up, turn.failed follows.
				r.Retried = true
				return
			}
			r.Error = or(ev.Message, "error")
		}
	})
	return r
}

// parseGemini reads `gemini --output-format json`: one object with the
// response, per-model token stats and an optional error. A fatal error
// comes as such an object on stderr instead (geminiStderrError).
func parseGemini(out []byte) cliReport {
	var r cliReport
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return parseCLIOutput(CLICommand, out)
	}
	var doc struct {
		Response string `json:"response"`
		Stats    struct {
			Models map[string]struct {
				Tokens struct {
					Prompt     int64 `json:"prompt"`
					Candidates int64 `json:"candidates"`
					Cached     int64 `json:"cached"`
					Thoughts   int64 `json:"thoughts"`
				} `json:"tokens"`
			} `json:"models"`
			InputTokens  int64 `json:"inputTokens"`
			OutputTokens int64 `json:"outputTokens"`
		} `json:"stats"`
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.NewDecoder(bytes.NewReader(out[i:])).Decode(&doc) != nil {
		return parseCLIOutput(CLICommand, out)
	}
	r.Response = doc.Response
	// Per model: prompt counts the cached tokens too; thoughts are billed
	// as output. Older releases gave only the two totals.
	if len(doc.Stats.Models) == 0 {
		r.Usage = Usage{InputTokens: doc.Stats.InputTokens, OutputTokens: doc.Stats.OutputTokens}
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Stats.Models)) {
		t := doc.Stats.Models[name].Tokens
		r.Usage.add(Usage{InputTokens: t.Prompt - t.Cached, CacheReadTokens: t.Cached, OutputTokens: t.Candidates + t.Thoughts})
		r.Model = joinModel(r.Model, name)
	}
	if doc.Error != nil {
		r.Error = or(doc.Error.Message, doc.Error.Type)
	}
	return r
}

// geminiStderrError is the message of the JSON error object the Gemini CLI
// prints on stderr when it fails, or "", and whether the error is its turn
// limit (maxSessionTurns). Stack traces and objects of its own come first,
// so the last object at the start of a line that decodes with an error is
// the one.
func geminiStderrError(stderr []byte) (msg string, limit bool) {
	for end := len(stderr); end >= 0; {
		i := bytes.LastIndex(stderr[:end], []byte("\n{"))
		start := i + 1
		if i < 0 {
			if !bytes.HasPrefix(stderr, []byte("{")) {
				return "", false
			}
			start = 0
		}
		var doc struct {
			Error *struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if json.NewDecoder(bytes.NewReader(stderr[start:])).Decode(&doc) == nil && doc.Error != nil {
			return or(doc.Error.Message, doc.Error.Type), doc.Error.Type == "FatalTurnLimitedError"
		}
		if i < 0 {
			return "", false
		}
		end = i
	}
	return "", false
}

// geminiSessionText is what the model said in the Gemini CLI's newest
// session file under home (.gemini/tmp/PROJECT/chats/session-*.jsonl, one
// record per line, the model's as type "gemini"), or "". The CLI prints
// its JSON only when it ends, so this is all that shows what a session
// killed at its timeout did.
func geminiSessionText(home string, limit int64) string {
	files, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	if len(files) == 0 {
		return ""
	}
	slices.Sort(files) // named by start time
	out, err := safefile.TailPath(files[len(files)-1], limit)
	if err != nil {
		return ""
	}
	var parts []string
	jsonLines(out, func(_ string, line []byte) {
		var rec struct {
			Type    string `json:"type"`
			Content any    `json:"content"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "gemini" {
			if s, ok := rec.Content.(string); ok && s != "" {
				parts = append(parts, s)
			}
		}
	})
	return strings.Join(parts, "\n")
}
