package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// transcript appends one JSON object per event to transcript.jsonl in the
// stage directory: what the model was asked, said and did. Text is
// redacted before it is written.
type transcript struct {
	mu      sync.Mutex
	f       *os.File
	secrets []string
	err     error // first write error; the session goes on without a record
}

func newTranscript(path string, secrets []string) (*transcript, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	return &transcript{f: f, secrets: secrets}, nil
}

// event writes one line: {"time":…,"kind":…, fields…}.
func (t *transcript) event(kind string, fields map[string]any) {
	rec := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "kind": kind}
	for k, v := range fields {
		rec[k] = v
	}
	b, err := json.Marshal(rec)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"kind": kind, "marshal_error": err.Error()})
	}
	line := redact(string(b), t.secrets) + "\n"
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.f.WriteString(line); err != nil && t.err == nil {
		t.err = err
	}
}

func (t *transcript) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.f.Close(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}
