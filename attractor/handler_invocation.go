package attractor

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// invocation.json records what a stage attempt ran, for people reading a
// run: the node, the stage variables and every process with its argv,
// directory, timeout and result. Only KILROY_* stage variables appear;
// the host's environment (which may hold secrets) never does.
type invocation struct {
	RunID     string            `json:"run_id"`
	Node      string            `json:"node"`
	Kind      Kind              `json:"kind"`
	Visit     int               `json:"visit"`
	Attempt   int               `json:"attempt"`
	Workspace string            `json:"workspace"`
	StageEnv  map[string]string `json:"stage_env"`
	Processes []processRecord   `json:"processes"`
}

type processRecord struct {
	Name     string   `json:"name,omitempty"`
	Argv     []string `json:"argv"`
	Dir      string   `json:"dir"`
	Timeout  string   `json:"timeout,omitempty"`
	Stdout   string   `json:"stdout"`
	Stderr   string   `json:"stderr"`
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out,omitempty"`
	Canceled bool     `json:"canceled,omitempty"`
	Duration string   `json:"duration"`
	Error    string   `json:"error,omitempty"`
}

func newProcessRecord(name string, req ExecRequest, res ExecResult, err error) processRecord {
	r := processRecord{
		Name:     name,
		Argv:     req.Argv,
		Dir:      req.Dir,
		Stdout:   filepath.Base(req.StdoutPath),
		Stderr:   filepath.Base(req.StderrPath),
		ExitCode: res.ExitCode,
		TimedOut: res.TimedOut,
		Canceled: res.Canceled,
		Duration: res.Duration.String(),
	}
	if req.Timeout > 0 {
		r.Timeout = req.Timeout.String()
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

func (s *Stage) writeInvocation() error {
	inv := invocation{
		RunID:     s.RunID,
		Node:      s.Node.ID,
		Kind:      s.Node.Kind,
		Visit:     s.Visit,
		Attempt:   s.Attempt,
		Workspace: s.Workspace,
		StageEnv:  s.Env,
		Processes: s.procs,
	}
	if inv.Processes == nil {
		inv.Processes = []processRecord{}
	}
	return writeJSONFile(filepath.Join(s.Dir, "invocation.json"), inv)
}

// writeJSONFile writes v indented. Stage files are written once, after the
// attempt and before listeners hear of it, so no reader races the write; a
// crash mid-write only leaves a stage that resume runs again.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	// Replaced, not written through: the stage's process may have left a
	// link or a FIFO at the path (status.json is its status path).
	return safefile.WriteFile(path, append(b, '\n'))
}
