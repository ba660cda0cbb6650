package attractor

import (
	"path/filepath"
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

// invocation is the attempt's invocation.json.
func (s *Stage) invocation() invocation {
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
	return inv
}
