package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// Gemini CLI prints its usage only when it ends, but records every model
// call with its tokens in its session file as it goes
// (~/.gemini/tmp/PROJECT/chats/session-*.jsonl under the isolated HOME,
// a "gemini" record per call, written again with the same id as it
// grows). geminiUsagePoll reads that file every geminiPollEvery while the
// CLI runs (often: a fake or fast model answers several calls within
// 100 ms, each of which the budget must see) and feeds each call's usage to the usage watch, which meters it
// and stops the CLI at the budget. Its tokens: input counts the cached
// ones too; thoughts are output.

const geminiPollEvery = 25 * time.Millisecond

// Codex too prints usage only when its session ends (turn.completed), and
// records a token_count event with the session's running total after
// every model call in its rollout file
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl under the isolated HOME);
// codexSessionUsage reads that.

// sessionUsagePoll starts polling the CLI's session file under home into
// w every geminiPollEvery, with read (geminiSessionUsage or
// codexSessionUsage), and returns the function that stops it (and waits
// for it).
func sessionUsagePoll(home string, limit int64, w *usageWatch, read func(home string, limit int64, w *usageWatch)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(geminiPollEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				read(home, limit, w)
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// newestSession is the end of the newest file matching pattern (named by
// start time), or nil.
func newestSession(pattern string, limit int64) []byte {
	files, _ := filepath.Glob(pattern)
	if len(files) == 0 {
		return nil
	}
	slices.Sort(files)
	out, err := safefile.TailPath(files[len(files)-1], limit)
	if err != nil {
		return nil
	}
	return out
}

// geminiSessionUsage reads the newest Gemini session file once.
func geminiSessionUsage(home string, limit int64, w *usageWatch) {
	out := newestSession(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"), limit)
	w.mu.Lock()
	defer w.mu.Unlock()
	jsonLines(out, func(_ string, line []byte) {
		var rec struct {
			ID     string `json:"id"`
			Type   string `json:"type"`
			Tokens *struct {
				Input    int64 `json:"input"`
				Output   int64 `json:"output"`
				Cached   int64 `json:"cached"`
				Thoughts int64 `json:"thoughts"`
			} `json:"tokens"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Type != "gemini" || rec.ID == "" || rec.Tokens == nil {
			return
		}
		t := rec.Tokens
		w.observe(rec.ID, Usage{InputTokens: t.Input - t.Cached, CacheReadTokens: t.Cached, OutputTokens: t.Output + t.Thoughts})
	})
}

// codexSessionUsage reads the running total of the newest Codex rollout
// file once.
func codexSessionUsage(home string, limit int64, w *usageWatch) {
	total, last := codexTotal(home, limit)
	if total == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observeTotal(*total, *last)
}

// codexTotal is the running total of the newest Codex rollout file and
// its last call's usage, or nils. input_tokens counts the cached ones too.
func codexTotal(home string, limit int64) (total, last *Usage) {
	out := newestSession(filepath.Join(home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"), limit)
	jsonLines(out, func(typ string, line []byte) {
		if typ != "event_msg" || !bytes.Contains(line, []byte(`"token_count"`)) {
			return
		}
		type counts struct {
			Input  int64 `json:"input_tokens"`
			Cached int64 `json:"cached_input_tokens"`
			Write  int64 `json:"cache_write_input_tokens"`
			Output int64 `json:"output_tokens"`
		}
		var ev struct {
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total counts `json:"total_token_usage"`
					Last  counts `json:"last_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.Payload.Type != "token_count" || ev.Payload.Info == nil {
			return
		}
		conv := func(c counts) *Usage {
			return &Usage{InputTokens: c.Input - c.Cached - c.Write, CacheReadTokens: c.Cached, CacheWriteTokens: c.Write, OutputTokens: c.Output}
		}
		total, last = conv(ev.Payload.Info.Total), conv(ev.Payload.Info.Last)
	})
	return total, last
}
